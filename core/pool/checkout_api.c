/* checkout_api.c - the public functions of shoal/checkout.h: takes and
 * returns from an actor (the consumer's side is actor/held.h) and from a
 * thread, and transactions. */
#include <string.h>

#include "actor/ctx.h"
#include "actor/held.h"
#include "pool/checkout.h"
#include "pool/pool.h"
#include "runtime/runtime.h"

/* A take's call waits this much longer than the take itself: the pool
 * answers SHOAL_ETIMEDOUT at the taker's deadline; the call's own timeout
 * is for a pool that does not answer at all. */
#define CALL_SLACK_MS 1000u

/* How long a thread's return waits for the pool to answer. */
#define RETURN_WAIT_MS 10000u

static uint64_t call_timeout(uint64_t timeout_ms)
{
    return timeout_ms > UINT64_MAX - CALL_SLACK_MS ? UINT64_MAX : timeout_ms + CALL_SLACK_MS;
}

SHOAL_API int shoal_take(shoal_ctx_t *ctx, shoal_pid_t pool, uint64_t timeout_ms, shoal_ref_t *ref)
{
    if (ref == NULL)
        return SHOAL_EINVAL;
    shoal_held_take_t t = {.timeout_ms = timeout_ms, .lease = 0};
    return shoal_call_priority(ctx, pool, SHOAL__CHECKOUT_TAKE, &t, sizeof t,
                               call_timeout(timeout_ms), ref);
}

/* The free members of checkout pool `pid` as it last published them; -1
 * if it is no live checkout pool. */
static int64_t free_of(shoal_runtime_t *rt, shoal_pid_t pid)
{
    shoal_pool_t *p = shoal__pool_find(rt, pid);
    if (p == NULL)
        return -1;
    int64_t n = -1;
    if (p->co != NULL && !shoal__pool_is_ended(p))
        n = atomic_load_explicit(&p->co->pub_free, memory_order_relaxed);
    shoal__pool_unref(rt, p);
    return n;
}

/* The most pools of one group shoal_take_group considers. */
#define GROUP_MAX 64u

SHOAL_API int shoal_take_group(shoal_ctx_t *ctx, const char *group, uint64_t timeout_ms,
                               shoal_ref_t *ref)
{
    if (group == NULL || ref == NULL)
        return SHOAL_EINVAL;
    shoal_pid_t pids[GROUP_MAX];
    size_t n = shoal__group_members(ctx->rt, group, pids, GROUP_MAX);
    if (n > GROUP_MAX)
        n = GROUP_MAX;
    if (n == 0)
        return SHOAL_ENOPROC;
    /* pooler's rule: a random pool; if it has no free member, the one with
     * the most; none has any: no member. xorshift32 per thread. */
    static _Thread_local uint32_t x;
    if (x == 0)
        x = (uint32_t)(ctx->self ^ ctx->self >> 32 ^ shoal__now_ns()) | 1u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    shoal_pid_t first = pids[x % n], pick = first;
    if (free_of(ctx->rt, pick) <= 0) {
        int64_t best = 0;
        pick = SHOAL_PID_NONE;
        for (size_t i = 0; i < n; i++) {
            int64_t f = free_of(ctx->rt, pids[i]);
            if (f > best) {
                best = f;
                pick = pids[i];
            }
        }
    }
    if (pick == SHOAL_PID_NONE) {
        shoal_pool_t *p = shoal__pool_find(ctx->rt, first); /* counted where it was tried */
        if (p != NULL && p->co != NULL)
            atomic_fetch_add_explicit(&p->co->txn_refused, 1, memory_order_relaxed);
        if (p != NULL)
            shoal__pool_unref(ctx->rt, p);
        return SHOAL_ENOMEMBERS;
    }
    return shoal_take(ctx, pick, timeout_ms, ref);
}

SHOAL_API int shoal_return(shoal_ctx_t *ctx, shoal_pid_t member, int how)
{
    return shoal__held_return(ctx, member, how);
}

SHOAL_API int shoal_checkout_call(shoal_ctx_t *ctx, shoal_pid_t pool, uint32_t type,
                                  const void *data, size_t size, uint64_t timeout_ms,
                                  shoal_ref_t *ref)
{
    return shoal_call(ctx, pool, type, data, size, timeout_ms, ref);
}

/* Which thread this is, for the pool: its thread cache's address (one
 * per thread while it lives). A thread's return must come from the thread
 * that took (checkout_take.c: may_return). */
static uint64_t thread_token(shoal_runtime_t *rt)
{
    return (uint64_t)(uintptr_t)shoal__tcache_get(rt);
}

SHOAL_API int shoal_runtime_take(shoal_runtime_t *rt, shoal_pid_t pool, uint64_t timeout_ms,
                                 shoal_pid_t *member)
{
    if (member == NULL)
        return SHOAL_EINVAL;
    *member = SHOAL_PID_NONE;
    shoal_held_take_t t = {.timeout_ms = timeout_ms, .lease = 1, .token = thread_token(rt)};
    shoal_answer_t a;
    int rc = shoal_runtime_call_priority(rt, pool, SHOAL__CHECKOUT_TAKE, &t, sizeof t,
                                         call_timeout(timeout_ms), &a);
    if (rc != SHOAL_OK)
        return rc; /* a grant that comes too late goes back by itself (call.c) */
    shoal_checkout_member_t g;
    if (a.status != SHOAL_OK)
        rc = a.status;
    else if (a.type != SHOAL_CHECKOUT_MEMBER || a.size != sizeof g)
        rc = SHOAL_ENOTSUP; /* not a checkout pool: someone else answered */
    else {
        memcpy(&g, a.data, sizeof g);
        *member = g.member;
    }
    shoal_answer_release(&a);
    return rc;
}

SHOAL_API int shoal_runtime_return(shoal_runtime_t *rt, shoal_pid_t pool, shoal_pid_t member,
                                   int how)
{
    if (how != SHOAL_RETURN_OK && how != SHOAL_RETURN_FAIL)
        return SHOAL_EINVAL;
    shoal_held_return_t r = {.member = member, .how = how, .token = thread_token(rt)};
    shoal_answer_t a;
    int rc = shoal_runtime_call_priority(rt, pool, SHOAL__CHECKOUT_RETURN, &r, sizeof r,
                                         RETURN_WAIT_MS, &a);
    if (rc != SHOAL_OK)
        return rc;
    rc = a.status;
    shoal_answer_release(&a);
    return rc;
}

SHOAL_API int shoal_runtime_checkout_call(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t type,
                                          const void *data, size_t size, uint64_t timeout_ms,
                                          shoal_answer_t *answer)
{
    return shoal_runtime_call(rt, pool, type, data, size, timeout_ms, answer);
}
