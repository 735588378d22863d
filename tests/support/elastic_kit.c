/* elastic_kit.c - the elastic pool suites' worker, pool spec, spawn and job
 * (elastic_kit.h). */
#include "elastic_kit.h"

#include <string.h>

atomic_int ek_done, ek_entered, ek_gate, ek_entered2, ek_gate2;
_Atomic double ek_left_at; /* when the last blocked handler went on */

void ek_reset(void)
{
    atomic_store(&ek_done, 0);
    atomic_store(&ek_entered, 0);
    atomic_store(&ek_gate, 0);
    atomic_store(&ek_entered2, 0);
    atomic_store(&ek_gate2, 0);
}

static int wk_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    uint32_t act;
    if (msg->type != EK_T_JOB || msg->size != sizeof act)
        return 0;
    memcpy(&act, msg->data, sizeof act);
    if (act & EK_A_BLOCK) {
        atomic_fetch_add(&ek_entered, 1);
        shoal_test_wait_flag(&ek_gate, EK_WAIT_S);
        atomic_store(&ek_left_at, shoal_test_now());
    }
    if (act & EK_A_BLOCK2) {
        atomic_fetch_add(&ek_entered2, 1);
        shoal_test_wait_flag(&ek_gate2, EK_WAIT_S);
    }
    atomic_fetch_add(&ek_done, 1);
    return 0;
}

static const shoal_behaviour_t wk = {.name = "wk", .handle_message = wk_message};

shoal_pool_spec_t ek_spec_of(uint32_t kind, uint32_t size, uint32_t min, uint32_t max,
                             uint32_t mailbox)
{
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = kind == SHOAL_POOL_KIND_PULL ? "pull" : "forward";
    s.worker = &wk;
    s.kind = kind;
    s.size = size;
    s.min_size = min;
    s.max_size = max;
    s.mailbox = mailbox;
    s.buffer = mailbox; /* a pull pool's */
    return s;
}

shoal_pid_t ek_spawn(shoal_runtime_t *rt, const shoal_pool_spec_t *s)
{
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, s, &p), SHOAL_OK);
    return p;
}

shoal_pid_t ek_spawn_bounded(shoal_runtime_t *rt, uint32_t limit)
{
    shoal_spawn_opts_t o = {.mailbox_limit = limit};
    shoal_pid_t a = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &wk, NULL, &o, &a), SHOAL_OK);
    return a;
}

shoal_pool_spec_t ek_spec_checkout(uint32_t size)
{
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = "checkout";
    s.worker = &wk;
    s.kind = SHOAL_POOL_KIND_CHECKOUT;
    s.size = s.max_size = size;
    s.checkout.queue_max = 0;
    s.checkout.cull_interval_ms = 0;
    return s;
}

int ek_job(shoal_runtime_t *rt, shoal_pid_t to, uint32_t act)
{
    return shoal_runtime_send(rt, to, EK_T_JOB, &act, sizeof act);
}
