/* test_checkout_adversarial_send_many.c - shoal_send_many used the way a
 * careless or hostile caller would, with exact outcomes: send_many to a
 * checkout pool (admission), with n = SIZE_MAX and no payload, and mixed
 * with single sends from several threads.
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

/* ---- send_many ---------------------------------------------------------------------- */

/* A run to a checkout pool is that many transactions: admitted up to
 * max + queue_max, the next refused SHOAL_ENOMEMBERS (counted once). */
static void send_many_to_a_checkout_pool(void)
{
    shoal_runtime_t *rt = ck_runtime(4);
    shoal_pid_t pool = ck_start(rt, 1, 1, 2);
    uint64_t v[10] = {0};
    size_t sent = 99;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, pool, T_BLOCK, v, sizeof v[0], 10, &sent),
                    SHOAL_ENOMEMBERS);
    CU_ASSERT_EQUAL(sent, 3);
    CK_WAIT_UNTIL(atomic_load(&ck_mblocked) == 1);
    shoal_pool_stats_t st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.error_no_members, 1);
    CU_ASSERT_EQUAL(st.messages_unhandled, 1);
    /* n = 0: nothing, OK; no payload: refused as a single send would be. */
    static const char none[1];
    sent = 99;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, pool, T_OK, none, 0, 0, &sent), SHOAL_OK);
    CU_ASSERT_EQUAL(sent, 0);
    sent = 99;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, pool, T_OK, none, 0, 5, &sent), SHOAL_ENOMEMBERS);
    CU_ASSERT_EQUAL(sent, 0);
    CU_ASSERT_EQUAL(ck_stats(rt, pool).error_no_members, 2);
    atomic_store(&ck_mgate, 1);
    CK_WAIT_UNTIL(atomic_load(&ck_handled) == 3 && ck_stats(rt, pool).free == 1);
    /* Room again: a run of SIZE_MAX without payload takes exactly 3. */
    atomic_store(&ck_mgate, 0);
    atomic_store(&ck_mblocked, 0);
    sent = 99;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, pool, T_BLOCK, none, 0, SIZE_MAX, &sent),
                    SHOAL_ENOMEMBERS);
    CU_ASSERT_EQUAL(sent, 3);
    atomic_store(&ck_mgate, 1);
    CK_WAIT_UNTIL(atomic_load(&ck_handled) == 6 && ck_stats(rt, pool).free == 1);
    st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(atomic_load(&ck_handled), 6);
    CU_ASSERT_EQUAL(st.takes, 6);
    CU_ASSERT_EQUAL(st.returned_ok, 6);
    CU_ASSERT_EQUAL(st.messages_forwarded, 6);
    CU_ASSERT_EQUAL(st.messages_handled, 6);
    CU_ASSERT_EQUAL(st.error_no_members, 3);
    CU_ASSERT_EQUAL(st.messages_unhandled, 3);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_EQUAL(atomic_load(&ck_started), 1);
    shoal_runtime_destroy(rt);
}

/* A receiver that counts, blocked on its gate in its first message. */
static atomic_int rx_n, rx_entered, rx_gate;

static int rx_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    if (msg->kind != SHOAL_MSG_CAST)
        return SHOAL_OK;
    atomic_fetch_add(&rx_entered, 1);
    while (!atomic_load(&rx_gate))
        shoal_test_nap();
    atomic_fetch_add(&rx_n, 1);
    return SHOAL_OK;
}

static const shoal_behaviour_t rx = {.name = "rx", .handle_message = rx_message};

/* n = SIZE_MAX with no payload: a bounded actor and a full pool take their
 * room and refuse the rest at once. */
static void send_many_of_size_max(void)
{
    atomic_store(&rx_n, 0);
    atomic_store(&rx_entered, 0);
    atomic_store(&rx_gate, 0);
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_spawn_opts_t o = {.mailbox_limit = 16};
    shoal_pid_t a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &rx, NULL, &o, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, a, 1, NULL, 0), SHOAL_OK);
    CK_WAIT_UNTIL(atomic_load(&rx_entered) == 1);
    size_t sent = 99;
    static const char none[1];
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, a, 1, none, 0, SIZE_MAX, &sent), SHOAL_EFULL);
    size_t room = sent;
    CU_ASSERT_TRUE(room >= 15 && room <= 16);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, a, 1, NULL, 0), SHOAL_EFULL);
    /* A forward pool: 3 workers of mailbox 4, each holding one. */
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = "fwd";
    s.worker = &rx;
    s.size = 3;
    s.mailbox = 4;
    shoal_pid_t pool;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, pool, 1, none, 0, 3, &sent), SHOAL_OK);
    CU_ASSERT_EQUAL(sent, 3);
    CK_WAIT_UNTIL(atomic_load(&rx_entered) == 4);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&rx_entered), 4);
    sent = 99;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, pool, 1, none, 0, SIZE_MAX, &sent), SHOAL_EBUSY);
    CU_ASSERT_EQUAL(sent, 12);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, 1, NULL, 0), SHOAL_EBUSY);
    atomic_store(&rx_gate, 1);
    CK_WAIT_UNTIL(atomic_load(&rx_n) == (int)(1 + room + 3 + 12));
    CU_ASSERT_EQUAL(atomic_load(&rx_n), (int)(1 + room + 3 + 12));
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, pool);
    CU_ASSERT_EQUAL(st.messages_forwarded, 15);
    CU_ASSERT_EQUAL(st.messages_unhandled, 2);
    shoal_runtime_destroy(rt);
}

/* Several threads mix runs and single sends into one pool: every message
 * arrives once, each sender's messages in order at each worker. */
#define MIX_THREADS 4
#define MIX_ROUNDS 200
#define MIX_RUN 37
#define MIX_PER (MIX_ROUNDS * (MIX_RUN + 1))

static atomic_int mix_n, mix_bad;

typedef struct {
    int64_t last[MIX_THREADS];
} mix_state_t;

static int mix_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    (void)args;
    mix_state_t *s = state;
    for (int k = 0; k < MIX_THREADS; k++)
        s->last[k] = -1;
    return SHOAL_OK;
}

static int mix_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    mix_state_t *s = state;
    uint64_t v;
    if (msg->kind != SHOAL_MSG_CAST || msg->size != sizeof v) {
        atomic_fetch_add(&mix_bad, 1);
        return SHOAL_OK;
    }
    memcpy(&v, msg->data, sizeof v);
    unsigned who = (unsigned)(v >> 32);
    int64_t seq = (int64_t)(v & 0xffffffffu);
    if (who >= MIX_THREADS || seq <= s->last[who])
        atomic_fetch_add(&mix_bad, 1);
    else
        s->last[who] = seq;
    atomic_fetch_add(&mix_n, 1);
    return SHOAL_OK;
}

static const shoal_behaviour_t mixer = {.name = "mix",
                                        .state_size = sizeof(mix_state_t),
                                        .init = mix_init,
                                        .handle_message = mix_message};

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    unsigned who;
    long sent, errors;
} mix_thread_t;

static void *mix_main(void *arg)
{
    mix_thread_t *t = arg;
    uint64_t seq = 0, v[MIX_RUN];
    for (int r = 0; r < MIX_ROUNDS; r++) {
        for (int j = 0; j < MIX_RUN; j++)
            v[j] = (uint64_t)t->who << 32 | seq++;
        size_t sent = 0;
        int rc = shoal_runtime_send_many(t->rt, t->pool, 1, v, sizeof v[0], MIX_RUN, &sent);
        t->sent += (long)sent;
        t->errors += rc != SHOAL_OK || sent != MIX_RUN;
        uint64_t one = (uint64_t)t->who << 32 | seq++;
        rc = shoal_runtime_send(t->rt, t->pool, 1, &one, sizeof one);
        t->sent += rc == SHOAL_OK;
        t->errors += rc != SHOAL_OK;
    }
    return NULL;
}

static void send_many_mixed_with_sends_from_threads(void)
{
    atomic_store(&mix_n, 0);
    atomic_store(&mix_bad, 0);
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = "mixed";
    s.worker = &mixer;
    s.size = 3;
    s.mailbox = SHOAL_MAILBOX_UNBOUNDED;
    shoal_pid_t pool;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    mix_thread_t t[MIX_THREADS];
    pthread_t tid[MIX_THREADS];
    for (unsigned k = 0; k < MIX_THREADS; k++) {
        t[k] = (mix_thread_t){.rt = rt, .pool = pool, .who = k};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&tid[k], NULL, mix_main, &t[k]), 0);
    }
    long sent = 0, errors = 0;
    for (unsigned k = 0; k < MIX_THREADS; k++) {
        pthread_join(tid[k], NULL);
        sent += t[k].sent;
        errors += t[k].errors;
    }
    CU_ASSERT_EQUAL(errors, 0);
    CU_ASSERT_EQUAL(sent, (long)MIX_THREADS * MIX_PER);
    CK_WAIT_UNTIL(atomic_load(&mix_n) == MIX_THREADS * MIX_PER);
    CU_ASSERT_EQUAL(atomic_load(&mix_n), MIX_THREADS * MIX_PER);
    CU_ASSERT_EQUAL(atomic_load(&mix_bad), 0);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, pool);
    CU_ASSERT_EQUAL(st.messages_forwarded, (uint64_t)MIX_THREADS * MIX_PER);
    CU_ASSERT_EQUAL(st.messages_unhandled, 0);
    CK_WAIT_UNTIL(shoal_test_pool_stats(rt, pool).messages_handled ==
                  (uint64_t)MIX_THREADS * MIX_PER);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, pool).messages_handled,
                    (uint64_t)MIX_THREADS * MIX_PER);
    shoal_runtime_destroy(rt);
}

/* data NULL with size 0 passes the argument check (a single send of no
 * payload is fine): n of them must be sent too. Last: under UBSan this
 * has hit "applying zero offset to null pointer" in core/actor/send.c. */
static void send_many_of_no_payload_from_null(void)
{
    atomic_store(&rx_n, 0);
    atomic_store(&rx_entered, 0);
    atomic_store(&rx_gate, 1);
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &rx, NULL, NULL, &a), SHOAL_OK);
    size_t sent = 99;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, a, 1, NULL, 0, 0, &sent), SHOAL_OK);
    CU_ASSERT_EQUAL(sent, 0);
    sent = 99;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, a, 1, NULL, 0, 100, &sent), SHOAL_OK);
    CU_ASSERT_EQUAL(sent, 100);
    CK_WAIT_UNTIL(atomic_load(&rx_n) == 100);
    CU_ASSERT_EQUAL(atomic_load(&rx_n), 100);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"send_many to a checkout pool", send_many_to_a_checkout_pool},
        {"send_many of SIZE_MAX", send_many_of_size_max},
        {"send_many mixed with sends from threads", send_many_mixed_with_sends_from_threads},
        {"send_many of no payload from NULL", send_many_of_no_payload_from_null},
        {NULL, NULL},
    };
    return shoal_test_run("checkout_adversarial_send_many", cases);
}
