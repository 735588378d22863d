/* api.c - the public pool functions (shoal/pool.h): spawning, and the
 * management commands as blocking priority calls from a thread. */
#include <string.h>

#include "actor/call.h"
#include "pool/pool.h"
#include "runtime/runtime.h"

SHOAL_API int shoal_runtime_spawn_pool(shoal_runtime_t *rt, const shoal_pool_spec_t *spec,
                                       shoal_pid_t *pid)
{
    shoal_tcache_t *tc = shoal__tcache_get(rt);
    if (tc != NULL && tc->worker != NULL) /* a dispatcher thread never waits */
        return shoal__pool_spawn(rt, tc, SHOAL_PID_NONE, NULL, spec, NULL, 0, false, pid);
    return shoal__pool_start(rt, spec, NULL, 0, pid, NULL, 0);
}

SHOAL_API int shoal_spawn_pool(shoal_ctx_t *ctx, const shoal_pool_spec_t *spec, shoal_pid_t *pid)
{
    int rc = shoal__pool_spawn(ctx->rt, ctx->tc, ctx->self, NULL, spec, NULL, 0, false, pid);
    if (rc != SHOAL_OK)
        return rc;
    if ((rc = shoal__children_add(ctx, *pid)) != SHOAL_OK)
        *pid = SHOAL_PID_NONE; /* stopped: it must not outlive us untracked */
    return rc;
}

/* A command whose payload and answer are one uint32_t. */
static int command(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t type, uint32_t arg,
                   uint64_t timeout_ms)
{
    shoal_answer_t a;
    int rc = shoal_runtime_call_priority(rt, pool, type, &arg, sizeof arg, timeout_ms, &a);
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
