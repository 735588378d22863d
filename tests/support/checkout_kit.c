/* checkout_kit.c - the checkout suites' member and consumer (checkout_kit.h). */
#include "checkout_kit.h"

#include <string.h>

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, CK_WAIT_S)

atomic_int ck_started, ck_handled, ck_mgate, ck_mblocked;
atomic_int try_rc[CK_NC], take_rc[CK_NC], return_rc[CK_NC], grants[CK_NC], answers[CK_NC],
    answer_status[CK_NC], grant_order[CK_NC], stage[CK_NC], cgate[CK_NC], exits[CK_NC];
_Atomic shoal_pid_t got[CK_NC], exit_from[CK_NC];
static atomic_int granted_n;

/* ---- the member ---------------------------------------------------------- */

static int m_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    (void)state;
    (void)args;
    atomic_fetch_add(&ck_started, 1);
    return SHOAL_OK;
}

int ck_member_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind != SHOAL_MSG_CAST || msg->type < T_OK || msg->type > T_BLOCK)
        return SHOAL_OK; /* ck_alive()'s probe, or nothing of ours */
    atomic_fetch_add(&ck_handled, 1);
    if (msg->type == T_PANIC)
        shoal_panic(ctx, "member crashes mid-transaction");
    if (msg->type == T_BLOCK) {
        atomic_fetch_add(&ck_mblocked, 1);
        while (!atomic_load(&ck_mgate))
            shoal_test_nap();
    }
    return SHOAL_OK;
}

static int m_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)state;
    atomic_fetch_add(&ck_handled, 1);
    if (msg->type == T_PANIC)
        shoal_panic(ctx, "member crashes in a call");
    shoal_pid_t self = shoal_self(ctx);
    return shoal_reply_set(reply, msg->type, &self, sizeof self);
}

const shoal_behaviour_t ck_member = {
    .name = "conn", .init = m_init, .handle_message = ck_member_message, .handle_call = m_call};

shoal_pool_spec_t ck_spec(uint32_t init, uint32_t max, uint32_t queue_max)
{
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = "db";
    s.kind = SHOAL_POOL_KIND_CHECKOUT;
    s.worker = &ck_member;
    s.size = init;
    s.max_size = max;
    s.checkout.queue_max = queue_max;
    s.checkout.cull_interval_ms = 0;
    return s;
}

shoal_pid_t ck_start_spec(shoal_runtime_t *rt, const shoal_pool_spec_t *s)
{
    shoal_pid_t pool = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, s, &pool), SHOAL_OK);
    return pool;
}

shoal_pid_t ck_start(shoal_runtime_t *rt, uint32_t init, uint32_t max, uint32_t queue_max)
{
    shoal_pool_spec_t s = ck_spec(init, max, queue_max);
    return ck_start_spec(rt, &s);
}

shoal_pool_stats_t ck_stats(shoal_runtime_t *rt, shoal_pid_t pool)
{
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, pool);
    CU_ASSERT_EQUAL(st.in_use + st.free + st.starting, st.pool_size);
    return st;
}

bool ck_alive(shoal_runtime_t *rt, shoal_pid_t pid)
{
    return shoal_runtime_send_priority(rt, pid, 999, NULL, 0) == SHOAL_OK;
}

bool ck_dead(shoal_runtime_t *rt, shoal_pid_t pid)
{
    return shoal_runtime_send(rt, pid, 0, NULL, 0) == SHOAL_ENOPROC;
}

/* ---- the consumer -------------------------------------------------------- */

typedef struct {
    int i;
} consumer_t;

void ck_reset(void)
{
    atomic_store(&ck_started, 0);
    atomic_store(&ck_handled, 0);
    atomic_store(&ck_mgate, 0);
    atomic_store(&ck_mblocked, 0);
    atomic_store(&granted_n, 0);
    for (int i = 0; i < CK_NC; i++) {
        atomic_store(&try_rc[i], 99);
        atomic_store(&take_rc[i], 99);
        atomic_store(&return_rc[i], 99);
        atomic_store(&grants[i], 0);
        atomic_store(&answers[i], 0);
        atomic_store(&answer_status[i], 99);
        atomic_store(&grant_order[i], 0);
        atomic_store(&stage[i], 0);
        atomic_store(&cgate[i], 0);
        atomic_store(&exits[i], 0);
        atomic_store(&got[i], SHOAL_PID_NONE);
        atomic_store(&exit_from[i], SHOAL_PID_NONE);
    }
}

static int c_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    ((consumer_t *)state)->i = *(const int *)args;
    return SHOAL_OK;
}

static void wait_gate(int i)
{
    atomic_store(&stage[i], 1);
    while (!atomic_load(&cgate[i]))
        shoal_test_nap();
}

static int c_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    int i = ((consumer_t *)state)->i;
    if (msg->kind == SHOAL_MSG_REPLY) { /* a shoal_take's answer */
        atomic_store(&answer_status[i], msg->status);
        if (msg->status == SHOAL_OK && msg->type == SHOAL_CHECKOUT_MEMBER) {
            shoal_checkout_member_t g;
            memcpy(&g, msg->data, sizeof g);
            atomic_store(&got[i], g.member);
            atomic_store(&grant_order[i], atomic_fetch_add(&granted_n, 1) + 1);
            atomic_fetch_add(&grants[i], 1);
        }
        atomic_fetch_add(&answers[i], 1);
        return SHOAL_OK;
    }
    if (msg->kind == SHOAL_MSG_EXIT) {
        atomic_store(&exit_from[i], msg->from);
        atomic_fetch_add(&exits[i], 1);
        return SHOAL_OK;
    }
    if (msg->kind != SHOAL_MSG_CAST || msg->size != sizeof(ck_order_t))
        return SHOAL_OK;
    ck_order_t o;
    memcpy(&o, msg->data, sizeof o);
    shoal_ref_t ref;
    switch (o.what) {
    case C_TRY: {
        shoal_pid_t m = SHOAL_PID_NONE;
        int rc = shoal_try_take(ctx, o.pool, &m);
        if (rc == SHOAL_OK)
            atomic_store(&got[i], m);
        atomic_store(&try_rc[i], rc);
        break;
    }
    case C_TAKE:
        atomic_store(&take_rc[i], shoal_take(ctx, o.pool, o.timeout_ms, &ref));
        break;
    case C_RETURN: {
        shoal_pid_t m = o.member != SHOAL_PID_NONE ? o.member : atomic_load(&got[i]);
        atomic_store(&return_rc[i], shoal_return(ctx, m, o.how));
        break;
    }
    case C_TAKE_PANIC:
        atomic_store(&take_rc[i], shoal_take(ctx, o.pool, o.timeout_ms, &ref));
        shoal_panic(ctx, "consumer crashes right after its take");
    case C_TAKE_BLOCK_PANIC:
        atomic_store(&take_rc[i], shoal_take(ctx, o.pool, o.timeout_ms, &ref));
        wait_gate(i);
        shoal_panic(ctx, "consumer crashes with its grant unread");
    case C_BLOCK_RETURN:
        wait_gate(i);
        atomic_store(&return_rc[i], shoal_return(ctx, atomic_load(&got[i]), o.how));
        break;
    case C_PANIC:
        shoal_panic(ctx, "consumer crashes");
    case C_EXIT:
        shoal_exit(ctx, SHOAL_OK);
        break;
    default:
        break;
    }
    return SHOAL_OK;
}

static const shoal_behaviour_t consumer = {.name = "consumer",
                                           .state_size = sizeof(consumer_t),
                                           .init = c_init,
                                           .handle_message = c_message};

shoal_runtime_t *ck_runtime(unsigned threads)
{
    ck_reset();
    shoal_runtime_t *rt = shoal_test_runtime(threads);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    return rt;
}

shoal_pid_t ck_spawn_consumer(shoal_runtime_t *rt, int i)
{
    static int idx[CK_NC];
    idx[i] = i;
    shoal_pid_t c;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &consumer, &idx[i], NULL, &c), SHOAL_OK);
    return c;
}

void ck_tell(shoal_runtime_t *rt, shoal_pid_t c, ck_order_t o)
{
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, c, 1, &o, sizeof o), SHOAL_OK);
}

int ck_try_take(shoal_runtime_t *rt, shoal_pid_t c, int i, shoal_pid_t pool)
{
    atomic_store(&try_rc[i], 99);
    ck_tell(rt, c, (ck_order_t){.what = C_TRY, .pool = pool});
    WAIT_UNTIL(atomic_load(&try_rc[i]) != 99);
    return atomic_load(&try_rc[i]);
}

int ck_take(shoal_runtime_t *rt, shoal_pid_t c, int i, shoal_pid_t pool, uint64_t timeout_ms)
{
    atomic_store(&take_rc[i], 99);
    ck_tell(rt, c, (ck_order_t){.what = C_TAKE, .pool = pool, .timeout_ms = timeout_ms});
    WAIT_UNTIL(atomic_load(&take_rc[i]) != 99);
    return atomic_load(&take_rc[i]);
}

int ck_give_back(shoal_runtime_t *rt, shoal_pid_t c, int i, shoal_pid_t m, int how)
{
    atomic_store(&return_rc[i], 99);
    ck_tell(rt, c, (ck_order_t){.what = C_RETURN, .member = m, .how = how});
    WAIT_UNTIL(atomic_load(&return_rc[i]) != 99);
    return atomic_load(&return_rc[i]);
}
