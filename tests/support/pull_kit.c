/* pull_kit.c - the pull pool suites' member, its records, and pool and
 * job makers (pull_kit.h). */
#include "pull_kit.h"

#include <string.h>
#include <time.h>

#include "actor/ctx.h"
#include "pool/pull.h"

_Atomic shoal_pid_t pu_owner[PU_MAXSEQ];
atomic_int pu_seen[PU_MAXSEQ];
_Atomic double pu_started_at[PU_MAXSEQ], pu_ended_at[PU_MAXSEQ];
atomic_int pu_done, pu_entered, pu_gate, pu_max_held, pu_over_held;
_Atomic uint32_t pu_prefetch_now;

void pu_reset(void)
{
    for (unsigned i = 0; i < PU_MAXSEQ; i++) {
        atomic_store(&pu_owner[i], SHOAL_PID_NONE);
        atomic_store(&pu_seen[i], 0);
        atomic_store(&pu_started_at[i], 0.0);
        atomic_store(&pu_ended_at[i], 0.0);
    }
    atomic_store(&pu_done, 0);
    atomic_store(&pu_entered, 0);
    atomic_store(&pu_gate, 0);
    atomic_store(&pu_max_held, 0);
    atomic_store(&pu_over_held, 0);
    atomic_store(&pu_prefetch_now, 1);
}

void pu_sleep_ms(uint32_t ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int wk_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    pu_job_t j;
    if (msg->kind != SHOAL_MSG_CAST || msg->type != T_JOB || msg->size != sizeof j)
        return 0;
    memcpy(&j, msg->data, sizeof j);
    /* What this member holds, the item in hand included (debug counter). */
    int held = (int)shoal__pull_held(ctx);
    int m = atomic_load(&pu_max_held);
    while (held > m && !atomic_compare_exchange_weak(&pu_max_held, &m, held))
        ;
    if ((uint32_t)held > atomic_load(&pu_prefetch_now) || held < 1)
        atomic_fetch_add(&pu_over_held, 1);
    int attempt = 1;
    if (j.seq < PU_MAXSEQ) {
        atomic_store(&pu_owner[j.seq], shoal_self(ctx));
        atomic_store(&pu_started_at[j.seq], shoal_test_now());
        attempt = atomic_fetch_add(&pu_seen[j.seq], 1) + 1;
    }
    bool now = !(j.act & A_FIRST) || attempt == 1;
    if (j.act & A_BLOCK) {
        atomic_fetch_add(&pu_entered, 1);
        shoal_test_wait_flag(&pu_gate, PU_WAIT_S);
    }
    if (j.act & A_SLEEP)
        pu_sleep_ms(j.sleep_ms);
    if ((j.act & A_PANIC) && now)
        shoal_panic(ctx, "test panic on job %u", (unsigned)j.seq);
    if ((j.act & A_FAIL) && now)
        return 7;
    if (j.seq < PU_MAXSEQ)
        atomic_store(&pu_ended_at[j.seq], shoal_test_now());
    atomic_fetch_add(&pu_done, 1);
    return 0;
}

static int wk_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)state;
    pu_who_t w = {shoal_self(ctx), msg->from, msg->ref};
    return shoal_reply_set(reply, T_WHO, &w, sizeof w);
}

const shoal_behaviour_t pu_wk = {
    .name = "wk", .handle_message = wk_message, .handle_call = wk_call};

void pu_pull_spec(shoal_pool_spec_t *s, uint32_t size, uint32_t prefetch, uint32_t buffer)
{
    shoal_pool_spec_init(s);
    s->name = "pull";
    s->worker = &pu_wk;
    s->kind = SHOAL_POOL_KIND_PULL;
    s->size = s->min_size = size;
    s->prefetch = prefetch;
    s->buffer = buffer;
    atomic_store(&pu_prefetch_now, prefetch);
}

shoal_pid_t pu_spawn(shoal_runtime_t *rt, const shoal_pool_spec_t *s)
{
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, s, &p), SHOAL_OK);
    return p;
}

int pu_job(shoal_runtime_t *rt, shoal_pid_t to, uint32_t seq, uint32_t act, uint32_t ms)
{
    pu_job_t j = {seq, act, ms, shoal_test_now()};
    return shoal_runtime_send(rt, to, T_JOB, &j, sizeof j);
}
