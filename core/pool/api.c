/* api.c - the public pool functions (shoal/pool.h): spawning, and the
 * management commands as blocking priority calls from a thread. */
#include <stddef.h>
#include <string.h>

#include "actor/call.h"
#include "pool/pool.h"
#include "shoal/checkout.h"
#include "runtime/runtime.h"

/* ---- the spec, at the size its user was built with ------------------------ */

/* What a spec built against ABI 1.2 or 1.3 holds. */
#define SPEC_SIZE_1_3 offsetof(shoal_pool_spec_t, kind)

static void spec_defaults(shoal_pool_spec_t *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->size = 4;
    spec->min_size = 1;
    spec->mailbox = 64;
    spec->restart.max = 5;
    spec->restart.within_ms = 5000;
    spec->restart.backoff_ms = 100;
    spec->kind = SHOAL_POOL_KIND_FORWARD;
    spec->prefetch = 1;
    spec->buffer = 1024;
    spec->dead_letter = SHOAL_PID_NONE;
    spec->autoscale = (shoal_pool_autoscale_t){
        .up_step = 1,
        .up_for_ms = 1000,
        .up_busy = 800,
        .down_busy = 400,
        .up_wait_us = 5000,
        .down_wait_us = 2500,
        .down_step = 1,
        .down_idle_ms = 30000,
        .cooldown_ms = 5000,
    };
    spec->checkout = (shoal_pool_checkout_t){
        .add_member_retry = 1,
        .member_start_timeout_ms = 10000,
        .cull_interval_ms = 60000,
        .max_age_ms = 30000,
        .queue_max = 50,
        .lease_ms = 30000,
    };
}

SHOAL_API void shoal_pool_spec_init_sized(shoal_pool_spec_t *spec, size_t size)
{
    shoal_pool_spec_t d;
    spec_defaults(&d);
    memcpy(spec, &d, size < sizeof d ? size : sizeof d);
}

SHOAL_API void(shoal_pool_spec_init)(shoal_pool_spec_t *spec)
{
    shoal_pool_spec_init_sized(spec, SPEC_SIZE_1_3);
}

/* A caller's spec chain (each of `size` bytes) as whole specs in chain[],
 * linked to each other: the fields past size get their defaults. */
static int spec_widen(const shoal_pool_spec_t *in, size_t size,
                      shoal_pool_spec_t chain[SHOAL_POOL_MAX_DEPTH])
{
    if (in == NULL || size < SPEC_SIZE_1_3)
        return SHOAL_EINVAL;
    if (size > sizeof *in)
        size = sizeof *in; /* a newer caller's fields we do not know are ignored */
    uint32_t i = 0;
    for (const shoal_pool_spec_t *s = in; s != NULL; s = s->worker_pool, i++) {
        if (i == SHOAL_POOL_MAX_DEPTH)
            return SHOAL_EINVAL;
        spec_defaults(&chain[i]);
        memcpy(&chain[i], s, size);
        if (i > 0)
            chain[i - 1].worker_pool = &chain[i];
    }
    return SHOAL_OK;
}

SHOAL_API int shoal_runtime_spawn_pool_sized(shoal_runtime_t *rt, const shoal_pool_spec_t *spec,
                                             size_t size, shoal_pid_t *pid)
{
    shoal_pool_spec_t chain[SHOAL_POOL_MAX_DEPTH];
    int rc = spec_widen(spec, size, chain);
    if (rc != SHOAL_OK)
        return rc;
    shoal_tcache_t *tc = shoal__tcache_get(rt);
    if (tc != NULL && tc->worker != NULL) /* a dispatcher thread never waits */
        return shoal__pool_spawn(rt, tc, SHOAL_PID_NONE, NULL, chain, NULL, 0, false, pid);
    return shoal__pool_start(rt, chain, NULL, 0, pid, NULL, 0);
}

SHOAL_API int shoal_spawn_pool_sized(shoal_ctx_t *ctx, const shoal_pool_spec_t *spec, size_t size,
                                     shoal_pid_t *pid)
{
    shoal_pool_spec_t chain[SHOAL_POOL_MAX_DEPTH];
    int rc = spec_widen(spec, size, chain);
    if (rc != SHOAL_OK)
        return rc;
    rc = shoal__pool_spawn(ctx->rt, ctx->tc, ctx->self, NULL, chain, NULL, 0, false, pid);
    if (rc != SHOAL_OK)
        return rc;
    if ((rc = shoal__children_add(ctx, *pid)) != SHOAL_OK)
        *pid = SHOAL_PID_NONE; /* stopped: it must not outlive us untracked */
    return rc;
}

SHOAL_API int(shoal_runtime_spawn_pool)(shoal_runtime_t *rt, const shoal_pool_spec_t *spec,
                                        shoal_pid_t *pid)
{
    return shoal_runtime_spawn_pool_sized(rt, spec, SPEC_SIZE_1_3, pid);
}

SHOAL_API int(shoal_spawn_pool)(shoal_ctx_t *ctx, const shoal_pool_spec_t *spec, shoal_pid_t *pid)
{
    return shoal_spawn_pool_sized(ctx, spec, SPEC_SIZE_1_3, pid);
}

/* A command whose answer is one uint32_t. */
static int command_with(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t type, const void *arg,
                        size_t size, uint64_t timeout_ms)
{
    shoal_answer_t a;
    int rc = shoal_runtime_call_priority(rt, pool, type, arg, size, timeout_ms, &a);
    if (rc != SHOAL_OK)
        return rc;
    uint32_t v = 0;
    if (a.status != SHOAL_OK)
        rc = a.status;
    else if (a.size != sizeof v)
        rc = SHOAL_ENOTSUP; /* not a pool: someone else answered the type */
    else
        memcpy(&v, a.data, sizeof v);
    shoal_answer_release(&a);
    if (rc != SHOAL_OK)
        return rc;
    return v > INT32_MAX ? INT32_MAX : (int)v;
}

/* A command whose payload and answer are one uint32_t. */
static int command(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t type, uint32_t arg,
                   uint64_t timeout_ms)
{
    return command_with(rt, pool, type, &arg, sizeof arg, timeout_ms);
}

SHOAL_API int shoal_pool_set_bounds(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t min_size,
                                    uint32_t max_size, uint64_t timeout_ms)
{
    uint32_t b[2] = {min_size, max_size};
    return command_with(rt, pool, SHOAL_POOL_SET_BOUNDS, b, sizeof b, timeout_ms);
}

SHOAL_API int shoal_pool_set_elastic(shoal_runtime_t *rt, shoal_pid_t pool,
                                     const shoal_pool_elastic_t *elastic, uint64_t timeout_ms)
{
    if (elastic == NULL)
        return SHOAL_EINVAL;
    int rc = command_with(rt, pool, SHOAL_POOL_SET_ELASTIC, elastic, sizeof *elastic, timeout_ms);
    return rc < 0 ? rc : SHOAL_OK;
}

SHOAL_API int shoal_pool_set_checkout(shoal_runtime_t *rt, shoal_pid_t pool,
                                      const shoal_pool_checkout_update_t *update,
                                      uint64_t timeout_ms)
{
    if (update == NULL)
        return SHOAL_EINVAL;
    int rc = command_with(rt, pool, SHOAL_POOL_SET_CHECKOUT, update, sizeof *update, timeout_ms);
    return rc < 0 ? rc : SHOAL_OK;
}

SHOAL_API int shoal_pool_add_workers(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t n,
                                     uint64_t timeout_ms)
{
    return command(rt, pool, SHOAL_POOL_ADD_WORKERS, n, timeout_ms);
}

SHOAL_API int shoal_pool_remove_workers(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t n,
                                        uint64_t timeout_ms)
{
    return command(rt, pool, SHOAL_POOL_REMOVE_WORKERS, n, timeout_ms);
}

SHOAL_API int shoal_pool_set_size(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t size,
                                  uint64_t timeout_ms)
{
    return command(rt, pool, SHOAL_POOL_SET_SIZE, size, timeout_ms);
}

SHOAL_API int shoal_pool_set_mailbox(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t limit,
                                     uint64_t timeout_ms)
{
    int rc = command(rt, pool, SHOAL_POOL_SET_MAILBOX, limit, timeout_ms);
    return rc < 0 ? rc : SHOAL_OK;
}

SHOAL_API int shoal_pool_set_strategy(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t strategy,
                                      uint64_t timeout_ms)
{
    int rc = command(rt, pool, SHOAL_POOL_SET_STRATEGY, strategy, timeout_ms);
    return rc < 0 ? rc : SHOAL_OK;
}

SHOAL_API int shoal_pool_stats(shoal_runtime_t *rt, shoal_pid_t pool, shoal_pool_stats_t *stats,
                               uint64_t timeout_ms)
{
    if (stats == NULL)
        return SHOAL_EINVAL;
    shoal_answer_t a;
    int rc = shoal_runtime_call_priority(rt, pool, SHOAL_POOL_STATS, NULL, 0, timeout_ms, &a);
    if (rc != SHOAL_OK)
        return rc;
    if (a.status != SHOAL_OK)
        rc = a.status;
    else if (a.size < sizeof(uint32_t))
        rc = SHOAL_ENOTSUP;
    memset(stats, 0, sizeof *stats);
    if (rc == SHOAL_OK)
        memcpy(stats, a.data, a.size < sizeof *stats ? a.size : sizeof *stats);
    shoal_answer_release(&a);
    return rc;
}

SHOAL_API int shoal_pool_drain(shoal_runtime_t *rt, shoal_pid_t pool, uint64_t timeout_ms)
{
    shoal_answer_t a;
    int rc = shoal_runtime_call_priority(rt, pool, SHOAL_POOL_DRAIN, NULL, 0, timeout_ms, &a);
    if (rc != SHOAL_OK)
        return rc;
    rc = a.status;
    shoal_answer_release(&a);
    return rc;
}

SHOAL_API int shoal_pool_worker_stats(shoal_runtime_t *rt, shoal_pid_t pool,
                                      shoal_pull_worker_stats_t *out, size_t cap,
                                      uint64_t timeout_ms)
{
    if (out == NULL && cap != 0)
        return SHOAL_EINVAL;
    shoal_answer_t a;
    int rc =
        shoal_runtime_call_priority(rt, pool, SHOAL_POOL_WORKER_STATS, NULL, 0, timeout_ms, &a);
    if (rc != SHOAL_OK)
        return rc;
    uint32_t head[2] = {0, 0};
    if (a.status != SHOAL_OK)
        rc = a.status;
    else if (a.size < sizeof head)
        rc = SHOAL_ENOTSUP;
    else
        memcpy(head, a.data, sizeof head);
    /* Each record as long as ours or theirs, whichever is shorter. */
    if (rc == SHOAL_OK && (head[0] == 0 || (a.size - sizeof head) / head[0] < head[1]))
        rc = SHOAL_ENOTSUP;
    if (rc == SHOAL_OK) {
        size_t each = head[0] < sizeof *out ? head[0] : sizeof *out;
        for (size_t i = 0; i < head[1] && i < cap; i++) {
            memset(&out[i], 0, sizeof out[i]);
            memcpy(&out[i], (const char *)a.data + sizeof head + i * head[0], each);
        }
        rc = head[1] > INT32_MAX ? SHOAL_ENOTSUP : (int)head[1];
    }
    shoal_answer_release(&a);
    return rc;
}
