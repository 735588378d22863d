/* swap_kit.c - the swap suites' worker, runtime, pool and swap steps
 * (swap_kit.h). */
#include "swap_kit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shoal/args.h"

/* A T_WHO call answers the worker's tag; T_JOB casts are counted, and
 * T_OWN, what an SW_I_SELF init sends itself. */
enum { T_WHO = 2, T_JOB = 3, T_OWN = 4 };

atomic_int sw_inits, sw_gate, sw_handled[3], sw_own[3];
atomic_int sw_hold_old, sw_old_gate;

static int w_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    const sw_wargs_t *a = args;
    *(int *)state = a->tag;
    if (a->init == SW_I_GATE) {
        double end = shoal_test_now() + SW_WAIT_S;
        while (!atomic_load(&sw_gate) && shoal_test_now() < end)
            shoal_test_nap();
    }
    int rc = SHOAL_OK;
    if (a->init == SW_I_SELF) {
        rc = shoal_send(ctx, shoal_self(ctx), T_OWN, NULL, 0);
        if (rc == SHOAL_OK)
            rc = shoal_send_after_priority(ctx, shoal_self(ctx), 10, T_OWN, NULL, 0, NULL);
    }
    atomic_fetch_add(&sw_inits, 1);
    if (rc != SHOAL_OK)
        return rc;
    if (a->init == SW_I_FAIL)
        return shoal_arg_error(ctx, NULL, NULL, "tag %d refuses to start", a->tag);
    if (a->init == SW_I_PANIC)
        shoal_panic(ctx, "tag %d panics in init", a->tag);
    return SHOAL_OK;
}

static int w_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    int tag = *(int *)state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == T_JOB && tag == 0 && atomic_load(&sw_hold_old))
        shoal_test_wait_flag(&sw_old_gate, SW_WAIT_S);
    if (msg->kind == SHOAL_MSG_CAST && msg->type == T_JOB && tag >= 0 && tag < 3)
        atomic_fetch_add(&sw_handled[tag], 1);
    if (msg->kind == SHOAL_MSG_CAST && msg->type == T_OWN && tag >= 0 && tag < 3)
        atomic_fetch_add(&sw_own[tag], 1);
    return 0;
}

static int w_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx, (void)msg;
    return shoal_reply_set(reply, T_WHO, state, sizeof(int));
}

const shoal_behaviour_t sw_worker = {.name = "w",
                                     .state_size = sizeof(int),
                                     .init = w_init,
                                     .handle_message = w_message,
                                     .handle_call = w_call};

shoal_runtime_t *sw_begin_with(int max_extra_threads)
{
    atomic_store(&sw_inits, 0);
    atomic_store(&sw_gate, 0);
    atomic_store(&sw_hold_old, 0);
    atomic_store(&sw_old_gate, 0);
    for (int i = 0; i < 3; i++) {
        atomic_store(&sw_handled[i], 0);
        atomic_store(&sw_own[i], 0);
    }
    shoal_runtime_opts_t o;
    shoal_runtime_opts_init(&o);
    o.threads = SW_THREADS;
    o.debug_checks = 1;
    o.log_level = SHOAL_LOG_INFO;
    o.max_extra_threads = max_extra_threads;
    return shoal_test_runtime_logged_opts(&o);
}

shoal_runtime_t *sw_begin(void) { return sw_begin_with(0); }

void sw_spec_of(shoal_pool_spec_t *s, uint32_t size, const sw_wargs_t *a)
{
    shoal_pool_spec_init(s);
    s->name = "p";
    s->worker = &sw_worker;
    s->worker_args = a;
    s->size = size;
    s->max_size = 16;
    s->mailbox = 1000;
}

int sw_who(shoal_runtime_t *rt, shoal_pid_t pool)
{
    shoal_answer_t a;
    int tag = -1;
    if (shoal_runtime_call(rt, pool, T_WHO, NULL, 0, SW_TMO, &a) == SHOAL_OK) {
        if (a.status == SHOAL_OK && a.size == sizeof tag)
            memcpy(&tag, a.data, sizeof tag);
        shoal_answer_release(&a);
    }
    return tag;
}

uint64_t sw_live(shoal_runtime_t *rt) { return shoal_test_stats(rt).actors_live; }

/* Its args live as long as the runtime: a static. */
shoal_pid_t sw_spawn_old(shoal_runtime_t *rt, uint32_t size)
{
    static const sw_wargs_t old = {.tag = 0, .init = SW_I_OK};
    shoal_pool_spec_t s;
    sw_spec_of(&s, size, &old);
    shoal_pid_t pool = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    return pool;
}

void sw_send_jobs(shoal_runtime_t *rt, shoal_pid_t pool, int n)
{
    for (int i = 0; i < n; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_JOB, &i, sizeof i), SHOAL_OK);
}

/* ---- the swap's steps -------------------------------------------------------------- */

int sw_ask(shoal_runtime_t *rt, shoal_pid_t pool, shoal_pool_swap_t *sw, uint64_t tmo_ms,
           uint64_t *token, shoal_pool_swap_result_t *r)
{
    shoal_pool_t *p = shoal__pool_find(rt, pool);
    CU_ASSERT_PTR_NOT_NULL(p);
    if (p == NULL) {
        shoal__pool_swap_free(sw);
        return SHOAL_ENOPROC;
    }
    int rc = shoal__pool_swap_ask(rt, p, pool, sw, tmo_ms, token, r);
    shoal__pool_unref(rt, p);
    return rc;
}

int sw_step(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t type, uint64_t token,
            uint32_t *replaced)
{
    return shoal__pool_swap_step(rt, pool, type, token, SW_TMO, replaced);
}

shoal_pool_swap_t *sw_new_swap(const sw_wargs_t *a, uint32_t size)
{
    shoal_pool_swap_t *sw = calloc(1, sizeof *sw);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
    sw_spec_of(&sw->chain[0], size, a);
    sw->size = size;
    return sw;
}

shoal_pool_swap_result_t sw_prepare(shoal_runtime_t *rt, shoal_pid_t pool, const sw_wargs_t *a,
                                    uint32_t size, uint64_t *token)
{
    shoal_pool_swap_result_t r;
    int rc = sw_ask(rt, pool, sw_new_swap(a, size), SW_TMO, token, &r);
    if (rc != r.status) {
        CU_FAIL("the call itself failed");
        fprintf(stderr, "\n    prepare: %s\n", shoal_errname(rc));
    }
    return r;
}
