/* checkout_api.c - the public functions of shoal/checkout.h: takes and
 * returns from an actor (the consumer's side is actor/held.h) and from a
 * thread, and transactions. */
#include <stdlib.h>
#include <string.h>

#include "actor/call.h"
#include "actor/ctx.h"
#include "actor/held.h"
#include "runtime/qsbr.h"
#include "pool/checkout.h"
#include "pool/checkout_fast.h"
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

static shoal_pool_t *checkout_of(shoal_ctx_t *ctx, shoal_pid_t pid, int *rc);

SHOAL_API int shoal_take(shoal_ctx_t *ctx, shoal_pid_t pool, uint64_t timeout_ms, shoal_ref_t *ref)
{
    if (ref == NULL)
        return SHOAL_EINVAL;
    int rc;
    shoal_pool_t *p = checkout_of(ctx, pool, &rc);
    if (p != NULL) {
        /* Served on this thread (checkout_fast.c): the answer comes as the
         * pool's would, a REPLY to a call that is pending here. One clock
         * reading for the call's deadline and the take's. A pool that has
         * begun to drain since it was found says so now, as one found
         * draining does: a group's take then tries another pool of it. */
        uint64_t now = 0;
        bool armed;
        if ((rc = shoal__call_expect(ctx, pool, call_timeout(timeout_ms), &now, ref, &armed)) ==
                SHOAL_OK &&
            (rc = shoal__co_take_here(ctx->rt, ctx->tc, p, ctx->self, *ref, timeout_ms, now)) !=
                SHOAL_OK)
            shoal__call_unexpect(ctx, *ref, armed);
        return rc;
    }
    /* A live actor or pool of another kind: not asked (a member would
     * answer the take as an ordinary call). A checkout pool that drains
     * (or has ended): at once. */
    if (rc == SHOAL_ENOTSUP)
        return rc;
    if (rc == SHOAL_ESHUTDOWN)
        return SHOAL_ENOPROC;
    /* Not a checkout pool we can see: the pool, or whoever it is, answers. */
    shoal_held_take_t t = {.timeout_ms = timeout_ms, .lease = 0};
    return shoal_call_priority(ctx, pool, SHOAL__CHECKOUT_TAKE, &t, sizeof t,
                               call_timeout(timeout_ms), ref);
}

/* The free members of checkout pool `pid` as it last published them; -1
 * if it is no live checkout pool, or it drains (it takes nothing new). */
static int64_t free_of(shoal_runtime_t *rt, shoal_pid_t pid)
{
    shoal_pool_t *p = shoal__pool_find(rt, pid);
    if (p == NULL)
        return -1;
    int64_t n = -1;
    if (p->co != NULL && !shoal__pool_is_ended(p) &&
        atomic_load_explicit(&p->pub_state, memory_order_relaxed) != SHOAL_POOL_DRAINING)
        n = atomic_load_explicit(&p->co->pub_free, memory_order_relaxed);
    shoal__pool_unref(rt, p);
    return n;
}

/* The pools of one group looked up on the stack; a larger group's are
 * looked up again into an array of their own, for the one call. */
#define GROUP_LOCAL 64u

/* pooler's rule over the n pools in pids. */
static int pick_of(shoal_ctx_t *ctx, const shoal_pid_t *pids, size_t n, shoal_pid_t *pick,
                   shoal_pid_t *first)
{
    if (n == 0)
        return SHOAL_ENOPROC;
    static _Thread_local uint32_t x; /* xorshift32 per thread */
    if (x == 0)
        x = (uint32_t)(ctx->self ^ ctx->self >> 32 ^ shoal__now_ns()) | 1u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *first = *pick = pids[x % n];
    int64_t f = free_of(ctx->rt, *first);
    if (f > 0)
        return SHOAL_OK;
    shoal_pid_t live = f == 0 ? *first : SHOAL_PID_NONE; /* takes transactions */
    int64_t best = 0;
    *pick = SHOAL_PID_NONE;
    for (size_t i = 0; i < n; i++) {
        if (pids[i] == *first || (f = free_of(ctx->rt, pids[i])) < 0)
            continue;
        if (live == SHOAL_PID_NONE)
            live = pids[i];
        if (f > best) {
            best = f;
            *pick = pids[i];
        }
    }
    *first = live;
    return live != SHOAL_PID_NONE ? SHOAL_OK : SHOAL_ENOPROC;
}

/* Drops from pids[0..n) the pools in refused[0..nrefused); the count left. */
static size_t without(shoal_pid_t *pids, size_t n, const shoal_pid_t *refused, size_t nrefused)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        bool out = false;
        for (size_t k = 0; k < nrefused && !out; k++)
            out = pids[i] == refused[k];
        if (!out)
            pids[m++] = pids[i];
    }
    return m;
}

/* pooler's rule: a random pool of the group; if it has no free member,
 * the one with the most. None has one: *pick is SHOAL_PID_NONE. *first is
 * the random pool, or if that one drains (a reload replaces or removes
 * it), the first that does not. Every pool of the group is considered
 * (the first 64 only, once: the others never got a take), but those in
 * refused[0..nrefused): they refused this caller already. SHOAL_ENOPROC:
 * no such group, or every pool of it drains or refused; SHOAL_EINVAL: no
 * group or no ref given; SHOAL_ENOMEM: a group past 64 pools, and no
 * memory for its list. */
static int group_pick(shoal_ctx_t *ctx, const char *group, const shoal_ref_t *ref,
                      const shoal_pid_t *refused, size_t nrefused, shoal_pid_t *pick,
                      shoal_pid_t *first)
{
    if (group == NULL || ref == NULL)
        return SHOAL_EINVAL;
    shoal_pid_t local[GROUP_LOCAL], *pids = local;
    size_t n = shoal__group_members(ctx->rt, group, pids, GROUP_LOCAL);
    if (n > GROUP_LOCAL) {
        if ((pids = malloc(n * sizeof *pids)) == NULL)
            return SHOAL_ENOMEM;
        /* The group may have changed since: what is in it now, within n. */
        size_t again = shoal__group_members(ctx->rt, group, pids, n);
        n = again < n ? again : n;
    }
    int rc = pick_of(ctx, pids, without(pids, n, refused, nrefused), pick, first);
    if (pids != local)
        free(pids);
    return rc;
}

/* Picks of a group tried in all when the pool picked began to drain, or
 * ended, before the take or the transaction reached it (SHOAL_ENOPROC from
 * the send, not from the pick): a reload that removes one pool of a group
 * while another stays must not tell the group's takers there is none.
 * A pool that refused is not picked again by the same call: the refusal
 * and the drain's published state (pub_state, read relaxed by free_of)
 * are not ordered for the caller, and picking it again for each try
 * told a taker there was none while a reload replaced the group's pool. */
#define GROUP_TRIES 4

SHOAL_API int shoal_take_group(shoal_ctx_t *ctx, const char *group, uint64_t timeout_ms,
                               shoal_ref_t *ref)
{
    int rc = SHOAL_ENOPROC;
    shoal_pid_t refused[GROUP_TRIES];
    for (int k = 0; k < GROUP_TRIES && rc == SHOAL_ENOPROC; k++) {
        shoal_pid_t pick, first;
        if ((rc = group_pick(ctx, group, ref, refused, (size_t)k, &pick, &first)) != SHOAL_OK)
            return rc;
        if (pick == SHOAL_PID_NONE) { /* none has a free member: counted where it was tried */
            shoal_pool_t *p = shoal__pool_find(ctx->rt, first);
            if (p != NULL && p->co != NULL)
                shoal__co_refused_early(p->co, ctx->tc);
            if (p != NULL)
                shoal__pool_unref(ctx->rt, p);
            return SHOAL_ENOMEMBERS;
        }
        rc = shoal_take(ctx, pick, timeout_ms, ref);
        refused[k] = pick;
    }
    return rc;
}

SHOAL_API int shoal_checkout_call_group(shoal_ctx_t *ctx, const char *group, uint32_t type,
                                        const void *data, size_t size, uint64_t timeout_ms,
                                        shoal_ref_t *ref)
{
    int rc = SHOAL_ENOPROC;
    shoal_pid_t refused[GROUP_TRIES];
    for (int k = 0; k < GROUP_TRIES && rc == SHOAL_ENOPROC; k++) {
        shoal_pid_t pick, first;
        if ((rc = group_pick(ctx, group, ref, refused, (size_t)k, &pick, &first)) != SHOAL_OK)
            return rc;
        refused[k] = pick != SHOAL_PID_NONE ? pick : first;
        rc = shoal_call(ctx, refused[k], type, data, size, timeout_ms, ref);
    }
    return rc;
}

/* The checkout pool record of `pid`, found inside the calling worker's
 * read-side region (runtime/qsbr.h; left at the end of its turn): NULL,
 * with *rc SHOAL_ENOPROC (nothing live of that generation seen),
 * SHOAL_ESHUTDOWN (a checkout pool whose mailbox is closed: it drains, or
 * has ended) or SHOAL_ENOTSUP (a pool of another kind, or an actor). */
static shoal_pool_t *checkout_of(shoal_ctx_t *ctx, shoal_pid_t pid, int *rc)
{
    *rc = SHOAL_ENOPROC;
    if (pid == SHOAL_PID_NONE || shoal__pid_slot(pid) >= ctx->rt->max_actors)
        return NULL;
    shoal__qsbr_enter(ctx->tc);
    shoal_actor_t *a = shoal__actor_at(ctx->rt, shoal__pid_slot(pid));
    /* acquire: the record a live generation points at is set up (send.c). */
    uint64_t w = atomic_load_explicit(&a->user_rsv, memory_order_acquire);
    if (shoal__rsv_gen(w) != shoal__pid_gen(pid))
        return NULL;
    /* seq_cst: the reader's load of qsbr.h's Dekker pair. */
    shoal_group_t *g = atomic_load_explicit(&a->group, memory_order_seq_cst);
    shoal_pool_t *p = g != NULL && g->pid == pid ? shoal__pool_of_group(g) : NULL;
    bool checkout = p != NULL && p->co != NULL;
    if (!shoal__rsv_alive(w)) {
        if (checkout)
            *rc = SHOAL_ESHUTDOWN;
        return NULL;
    }
    if (!checkout) {
        *rc = SHOAL_ENOTSUP;
        return NULL;
    }
    return p;
}

/* Gives `member` (at `seat` in p, SHOAL_CO_NIL: not known) back to `pool`:
 * an OK return straight back on this thread when the pool's actor is not
 * needed (checkout_fast.c; p: the pool's record, NULL if not at hand) --
 * a member the pool no longer gives this actor (it ended meanwhile) has
 * nothing to give back, as its return would have found at the pool --
 * else as a return to the pool's actor. */
static void give_back(shoal_ctx_t *ctx, shoal_pool_t *p, shoal_pid_t pool, shoal_pid_t member,
                      uint32_t seat, int how)
{
    if (how == SHOAL_RETURN_OK && p != NULL &&
        shoal__co_fast_return(ctx->rt, ctx->tc, p, member, seat, ctx->self) != SHOAL__CO_SLOW)
        return;
    shoal__held_send_back(ctx->rt, ctx->tc, ctx->self, pool, member, how);
}

SHOAL_API int shoal_try_take(shoal_ctx_t *ctx, shoal_pid_t pool, shoal_pid_t *member)
{
    if (member == NULL)
        return SHOAL_EINVAL;
    *member = SHOAL_PID_NONE;
    int rc;
    shoal_pool_t *p = checkout_of(ctx, pool, &rc);
    if (p == NULL)
        return rc == SHOAL_ESHUTDOWN ? SHOAL_ENOPROC : rc;
    shoal_pid_t m;
    uint32_t seat;
    rc = shoal__co_fast_take(ctx->rt, ctx->tc, p, ctx->self, &m, &seat);
    if (rc != SHOAL_OK)
        return rc;
    if (shoal__held_add(ctx, m, pool, seat + 1) != SHOAL_OK) {
        /* Untracked, it could never be given back: it goes back now. */
        give_back(ctx, p, pool, m, seat, SHOAL_RETURN_OK);
        return SHOAL_ENOMEM;
    }
    *member = m;
    return SHOAL_OK;
}

SHOAL_API int shoal_return(shoal_ctx_t *ctx, shoal_pid_t member, int how)
{
    shoal_held_t h;
    int rc = shoal__held_take_back(ctx, member, how, &h);
    if (rc != SHOAL_OK)
        return rc;
    shoal_pool_t *p = how == SHOAL_RETURN_OK ? checkout_of(ctx, h.pool, &rc) : NULL;
    give_back(ctx, p, h.pool, member, h.seat != 0 ? h.seat - 1 : SHOAL_CO_NIL, how);
    return SHOAL_OK;
}

SHOAL_API int shoal_checkout_call(shoal_ctx_t *ctx, shoal_pid_t pool, uint32_t type,
                                  const void *data, size_t size, uint64_t timeout_ms,
                                  shoal_ref_t *ref)
{
    return shoal_call(ctx, pool, type, data, size, timeout_ms, ref);
}

/* Which thread this is, for the pool: its thread cache's serial (never
 * another thread's, even once this one has ended). A thread's return must
 * come from the thread that took (checkout_take.c: may_return). 0: no
 * cache (no memory), which no take carries. */
static uint64_t thread_token(shoal_runtime_t *rt)
{
    shoal_tcache_t *tc = shoal__tcache_get(rt);
    return tc != NULL ? tc->serial : 0;
}

/* Whether a thread may send `pid` a take or a return: SHOAL_OK for a
 * checkout pool; SHOAL_ENOTSUP for any other live actor or pool (a
 * member would answer either as an ordinary call, and a return "answered"
 * so would read as done while the member stayed checked out); SHOAL_ENOPROC
 * for nothing live. */
static int thread_target(shoal_runtime_t *rt, shoal_pid_t pid)
{
    if (pid == SHOAL_PID_NONE || shoal__pid_slot(pid) >= rt->max_actors)
        return SHOAL_ENOPROC;
    shoal_pool_t *p = shoal__pool_find(rt, pid);
    if (p != NULL) {
        int rc = p->co != NULL ? SHOAL_OK : SHOAL_ENOTSUP;
        shoal__pool_unref(rt, p);
        return rc;
    }
    shoal_actor_t *a = shoal__actor_at(rt, shoal__pid_slot(pid));
    /* acquire: as checkout_of's (only the value is used). */
    uint64_t w = atomic_load_explicit(&a->user_rsv, memory_order_acquire);
    return shoal__rsv_gen(w) == shoal__pid_gen(pid) && shoal__rsv_alive(w) ? SHOAL_ENOTSUP
                                                                           : SHOAL_ENOPROC;
}

SHOAL_API int shoal_runtime_take(shoal_runtime_t *rt, shoal_pid_t pool, uint64_t timeout_ms,
                                 shoal_pid_t *member)
{
    if (member == NULL)
        return SHOAL_EINVAL;
    *member = SHOAL_PID_NONE;
    int rc = thread_target(rt, pool);
    if (rc != SHOAL_OK)
        return rc;
    shoal_held_take_t t = {.timeout_ms = timeout_ms, .lease = 1, .token = thread_token(rt)};
    if (t.token == 0)
        return SHOAL_ENOMEM;
    shoal_answer_t a;
    rc = shoal_runtime_call_priority(rt, pool, SHOAL__CHECKOUT_TAKE, &t, sizeof t,
                                     call_timeout(timeout_ms), &a);
    if (rc != SHOAL_OK)
        return rc; /* a grant that comes too late goes back by itself (waiter.c) */
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
    if ((how != SHOAL_RETURN_OK && how != SHOAL_RETURN_FAIL) || member == SHOAL_PID_NONE)
        return SHOAL_EINVAL;
    int rc = thread_target(rt, pool);
    if (rc != SHOAL_OK)
        return rc;
    shoal_held_return_t r = {.member = member, .how = how, .token = thread_token(rt)};
    shoal_answer_t a;
    rc = shoal_runtime_call_priority(rt, pool, SHOAL__CHECKOUT_RETURN, &r, sizeof r, RETURN_WAIT_MS,
                                     &a);
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
