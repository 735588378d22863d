/* test_swap_tokens.c - which swap a step is for, and steps the host stopped
 * waiting for (core/pool/swap.c):
 *
 *   - each step names its swap by a token: a step without it or with
 *     another's does nothing;
 *   - a COMMIT the host stopped waiting for (every dispatcher thread held)
 *     is carried out later, and a PREPARE read after the host took its
 *     offer back starts nothing.
 *
 * Workers carry a tag in their args, so the test knows which code answered
 * (sw_who); the worker and the swap's steps: support/swap_kit.h.
 */
#include <pthread.h>
#include <string.h>

#include "swap_kit.h"

/* An actor's step: a COMMIT to the pool with the payload it is sent (a
 * pid, then what to carry); the answer's status lands in `sw_gate`. */
static int asker_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_CAST) {
        shoal_pid_t to;
        memcpy(&to, msg->data, sizeof to);
        shoal_ref_t ref;
        shoal_call_priority(ctx, to, SHOAL__POOL_SWAP_COMMIT, (const char *)msg->data + sizeof to,
                            msg->size - sizeof to, SW_TMO, &ref);
    } else if (msg->kind == SHOAL_MSG_REPLY) {
        atomic_store(&sw_gate, msg->status);
    }
    return 0;
}
static const shoal_behaviour_t asker = {.name = "asker", .handle_message = asker_message};

static int asker_commit(shoal_runtime_t *rt, shoal_pid_t a, shoal_pid_t pool, const void *data,
                        size_t size)
{
    char buf[sizeof pool + 16];
    memcpy(buf, &pool, sizeof pool);
    if (size != 0)
        memcpy(buf + sizeof pool, data, size);
    atomic_store(&sw_gate, 0);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, a, 1, buf, sizeof pool + size), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&sw_gate) != 0, SW_WAIT_S);
    return atomic_load(&sw_gate);
}

/* A step names its swap by the token it carries: one without a token, or
 * with another swap's -- an actor's guess, an ABORT left from a swap
 * aborted before -- does nothing, and the prepared swap is still there. */
static void a_step_names_its_swap(void)
{
    shoal_runtime_t *rt = sw_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sw_wargs_t next = {.tag = 2, .init = SW_I_OK};
    shoal_pid_t pool = sw_spawn_old(rt, 2);
    shoal_pid_t a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &asker, NULL, NULL, &a), SHOAL_OK);
    uint64_t live0 = sw_live(rt);
    uint64_t ta, tb;
    CU_ASSERT_EQUAL(sw_prepare(rt, pool, &next, 3, &ta).status, SHOAL_OK);
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_ABORT, ta, NULL), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(sw_live(rt) == live0, SW_WAIT_S);
    CU_ASSERT_EQUAL(sw_prepare(rt, pool, &next, 3, &tb).status, SHOAL_OK);
    CU_ASSERT_NOT_EQUAL(ta, tb);
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_ABORT, ta, NULL), SHOAL_OK); /* stale */
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_ABORT, 0, NULL), SHOAL_OK);  /* none */
    CU_ASSERT_EQUAL(asker_commit(rt, a, pool, NULL, 0), SHOAL_EINVAL);
    uint64_t guess = tb + 1;
    CU_ASSERT_EQUAL(asker_commit(rt, a, pool, &guess, sizeof guess), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_COMMIT, ta, NULL), SHOAL_EINVAL);
    shoal_test_nap();
    CU_ASSERT_EQUAL(sw_live(rt), live0 + 3); /* b's new workers wait, untouched */
    CU_ASSERT_EQUAL(sw_who(rt, pool), 0);
    uint32_t n = 0;
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tb, &n), SHOAL_OK);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_EQUAL(sw_who(rt, pool), 2);
    shoal_runtime_destroy(rt);
}

/* Actors that hold every dispatcher thread until hog_gate opens: the
 * pool's actor cannot run meanwhile, so the host's calls to it time out
 * (in a runtime without compensating threads: sw_begin_with). */
static atomic_int hog_gate, hogs_in;

static int hog_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx, (void)state, (void)msg;
    atomic_fetch_add(&hogs_in, 1);
    shoal_test_wait_flag(&hog_gate, SW_WAIT_S);
    return 0;
}
static const shoal_behaviour_t hog = {.name = "hog", .handle_message = hog_message};

static void hog_every_thread(shoal_runtime_t *rt)
{
    atomic_store(&hog_gate, 0);
    atomic_store(&hogs_in, 0);
    for (unsigned i = 0; i < SW_THREADS; i++) {
        shoal_pid_t h;
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &hog, NULL, NULL, &h), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, h, 1, NULL, 0), SHOAL_OK);
    }
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&hogs_in) == (int)SW_THREADS, SW_WAIT_S);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&hogs_in), (int)SW_THREADS);
}

#define LATE_MS 300u

/* A COMMIT the host stopped waiting for (every thread held) is carried out
 * when the pool's actor reads it: the new code serves, and the next swap
 * is taken (it was refused as not the host's: the swap stayed prepared,
 * its code loaded, and every later swap of the pool answered EBUSY). */
static void a_late_commit_is_carried_out(void)
{
    shoal_runtime_t *rt = sw_begin_with(SHOAL_EXTRA_THREADS_NONE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sw_wargs_t next = {.tag = 2, .init = SW_I_OK}, third = {.tag = 1, .init = SW_I_OK};
    shoal_pid_t pool = sw_spawn_old(rt, 2);
    uint64_t tok;
    CU_ASSERT_EQUAL(sw_prepare(rt, pool, &next, 2, &tok).status, SHOAL_OK);
    hog_every_thread(rt);
    CU_ASSERT_EQUAL(shoal__pool_swap_step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok, LATE_MS, NULL),
                    SHOAL_ETIMEDOUT);
    atomic_store(&hog_gate, 1);
    shoal_pool_stats_t st; /* a call behind the COMMIT: read after it (sw_who() is forwarded) */
    CU_ASSERT_EQUAL(shoal_pool_stats(rt, pool, &st, SW_TMO), SHOAL_OK);
    CU_ASSERT_EQUAL(sw_who(rt, pool), 2);
    CU_ASSERT_EQUAL(sw_prepare(rt, pool, &third, 2, &tok).status, SHOAL_OK);
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok, NULL), SHOAL_OK);
    CU_ASSERT_EQUAL(sw_who(rt, pool), 1);
    shoal_runtime_destroy(rt);
}

/* A PREPARE read after the host stopped waiting finds its offer taken back
 * (freed then: it leaked before) and starts nothing; a late ABORT after it
 * is harmless, and the next swap is taken. */
static void a_late_prepare_starts_nothing(void)
{
    shoal_runtime_t *rt = sw_begin_with(SHOAL_EXTRA_THREADS_NONE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sw_wargs_t next = {.tag = 2, .init = SW_I_OK};
    shoal_pid_t pool = sw_spawn_old(rt, 2);
    hog_every_thread(rt);
    uint64_t live0 = sw_live(rt), tok;
    shoal_pool_swap_result_t r;
    CU_ASSERT_EQUAL(sw_ask(rt, pool, sw_new_swap(&next, 3), LATE_MS, &tok, &r), SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_EQUAL(shoal__pool_swap_step(rt, pool, SHOAL__POOL_SWAP_ABORT, tok, LATE_MS, NULL),
                    SHOAL_ETIMEDOUT);
    shoal_pool_t *p = shoal__pool_find(rt, pool);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pthread_mutex_lock(&p->offer_lock);
    CU_ASSERT_PTR_NULL(p->offer); /* taken back */
    pthread_mutex_unlock(&p->offer_lock);
    shoal__pool_unref(rt, p);
    atomic_store(&hog_gate, 1);
    shoal_pool_stats_t st; /* a call behind both steps: read after them */
    CU_ASSERT_EQUAL(shoal_pool_stats(rt, pool, &st, SW_TMO), SHOAL_OK);
    CU_ASSERT_EQUAL(st.pool_size, 2);
    shoal_test_nap();
    CU_ASSERT_EQUAL(sw_live(rt), live0); /* no new worker was started */
    CU_ASSERT_EQUAL(sw_who(rt, pool), 0);
    CU_ASSERT_EQUAL(sw_prepare(rt, pool, &next, 3, &tok).status, SHOAL_OK);
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok, NULL), SHOAL_OK);
    CU_ASSERT_EQUAL(sw_who(rt, pool), 2);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a step names its swap", a_step_names_its_swap},
        {"a late COMMIT is carried out", a_late_commit_is_carried_out},
        {"a late PREPARE starts nothing", a_late_prepare_starts_nothing},
        {NULL, NULL},
    };
    return shoal_test_run("swap: tokens and late steps", cases);
}
