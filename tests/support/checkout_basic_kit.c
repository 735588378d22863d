/* checkout_basic_kit.c - the checkout suites' counting member, pool makers
 * and taker thread (checkout_basic_kit.h). */
#include "checkout_basic_kit.h"

#include <string.h>
#include <time.h>

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, CB_WAIT_S)

atomic_int cb_started, cb_init_fail, cb_init_delay_ms, cb_gate, cb_blocked, cb_exits_seen;
_Atomic shoal_pid_t cb_exit_from;

/* ---- the member: answers T_WHO with its PID and its uses ------------------ */

typedef struct {
    uint64_t uses;
} member_t;

static int m_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    (void)state;
    (void)args;
    if (atomic_load(&cb_init_fail))
        return SHOAL_EFAILED;
    int d = atomic_load(&cb_init_delay_ms);
    if (d > 0) { /* a slow connect */
        struct timespec ts = {d / 1000, (long)(d % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    atomic_fetch_add(&cb_started, 1);
    return SHOAL_OK;
}

static int m_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    member_t *m = state;
    m->uses++;
    if (msg->type == T_BLOCK) {
        atomic_fetch_add(&cb_blocked, 1);
        while (!atomic_load(&cb_gate))
            shoal_test_nap();
    }
    if (msg->type == T_PANIC)
        shoal_panic(ctx, "member asked to panic");
    if (msg->type == T_FAIL)
        return SHOAL_EFAILED;
    if (msg->type == T_EXIT)
        shoal_exit(ctx, SHOAL_OK);
    return SHOAL_OK;
}

static int m_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    member_t *m = state;
    m->uses++;
    if (msg->type == T_FAIL)
        return SHOAL_EFAILED;
    if (msg->type == T_BLOCK) {
        atomic_fetch_add(&cb_blocked, 1);
        while (!atomic_load(&cb_gate))
            shoal_test_nap();
        if (atomic_load(&cb_gate) == CB_GATE_FAIL)
            return SHOAL_EFAILED;
    }
    if (msg->type == T_EXIT)
        shoal_exit(ctx, SHOAL_OK);
    cb_who_t w = {shoal_self(ctx), m->uses};
    return shoal_reply_set(reply, msg->type, &w, sizeof w);
}

const shoal_behaviour_t cb_member = {
    .name = "conn",
    .state_size = sizeof(member_t),
    .init = m_init,
    .handle_message = m_message,
    .handle_call = m_call,
};

atomic_int cb_hog_gate, cb_hog_in;

static int hog_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    atomic_store(&cb_hog_in, 1);
    shoal_test_wait_flag(&cb_hog_gate, CB_WAIT_S);
    return SHOAL_OK;
}

const shoal_behaviour_t cb_hog = {.name = "hog", .handle_message = hog_message};

shoal_pid_t cb_hog_hold(shoal_runtime_t *rt)
{
    shoal_pid_t hog = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &cb_hog, NULL, NULL, &hog), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, hog, 1, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&cb_hog_in) == 1);
    return hog;
}

void cb_reset(void)
{
    atomic_store(&cb_hog_gate, 0);
    atomic_store(&cb_hog_in, 0);
    atomic_store(&cb_started, 0);
    atomic_store(&cb_init_fail, 0);
    atomic_store(&cb_init_delay_ms, 0);
    atomic_store(&cb_gate, 0);
    atomic_store(&cb_blocked, 0);
    atomic_store(&cb_exits_seen, 0);
    atomic_store(&cb_exit_from, SHOAL_PID_NONE);
}

/* ---- pools -------------------------------------------------------------------- */

shoal_pool_spec_t cb_spec_of(uint32_t init, uint32_t max)
{
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = "db";
    s.kind = SHOAL_POOL_KIND_CHECKOUT;
    s.worker = &cb_member;
    s.size = init;
    s.max_size = max;
    return s;
}

shoal_pid_t cb_start(shoal_runtime_t *rt, const shoal_pool_spec_t *s)
{
    shoal_pid_t pool = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, s, &pool), SHOAL_OK);
    return pool;
}

shoal_pool_stats_t cb_stats(shoal_runtime_t *rt, shoal_pid_t pool)
{
    return shoal_test_pool_stats(rt, pool);
}

bool cb_alive(shoal_runtime_t *rt, shoal_pid_t pid)
{
    return shoal_runtime_send_priority(rt, pid, 999, NULL, 0) == SHOAL_OK;
}

/* Whether pid has ended, waiting for its end (up to CB_WAIT_S). A member the
 * pool stops -- returned FAIL, past its lifetime, past its lease -- is
 * counted, unseated and replaced when the pool sends it the stop; it ends
 * when a dispatcher thread runs that stop, which may come after its
 * replacement has started, been counted free, or been given out (an ASan
 * run on a busy CPU saw a recycled member still alive after the take that
 * got its replacement). So a case asserts such an end once it happened:
 * waiting for it, not assuming it came first. */
bool cb_ended(shoal_runtime_t *rt, shoal_pid_t pid)
{
    WAIT_UNTIL(!cb_alive(rt, pid));
    return !cb_alive(rt, pid);
}

/* ---- a taker on its own thread ------------------------------------------------ */

void *cb_taker_main(void *arg)
{
    cb_taker_t *t = arg;
    double t0 = shoal_test_now();
    t->rc = shoal_runtime_take(t->rt, t->pool, t->timeout_ms, &t->got);
    t->took = shoal_test_now() - t0;
    if (t->rc == SHOAL_OK && !t->keep)
        t->back_rc = shoal_runtime_return(t->rt, t->pool, t->got, SHOAL_RETURN_OK);
    atomic_store(&t->done, 1);
    return NULL;
}

void cb_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}
