/* call.c - calls and replies.
 *
 * From an actor a call is asynchronous: the CALL goes out with a fresh ref,
 * kept in the caller's pending list with its deadline; the caller's call
 * timer (below) hands it SHOAL_MSG_TIMEOUT with that ref once the deadline
 * has passed. Whichever of reply and timeout comes first settles the call;
 * a reply after it is dropped (call_settle). Replies
 * travel in the caller's system mailbox: a full user mailbox never refuses
 * them, and they go straight to the caller, never through a pool.
 *
 * From a thread that is not an actor: waiter.c.
 */
#include "actor/call.h"

#include <stdlib.h>

#include "actor/send.h"
#include "actor/timer.h"
#include "runtime/grow.h"
#include "runtime/runtime.h"
#include "sched/futex.h"

shoal_ref_t shoal__ref_next_slow(shoal_runtime_t *rt, shoal_tcache_t *tc)
{
    shoal_ref_t r;
    do {
        if (tc == NULL) {
            r = atomic_fetch_add_explicit(&rt->ref_seq, 1, memory_order_relaxed) + 1;
        } else {
            if (tc->ref_next == tc->ref_end) {
                /* relaxed: unique values only; each block is one thread's. */
                tc->ref_next =
                    atomic_fetch_add_explicit(&rt->ref_seq, SHOAL__REF_BLOCK, memory_order_relaxed);
                tc->ref_end = tc->ref_next + SHOAL__REF_BLOCK;
            }
            r = ++tc->ref_next;
        }
        r &= SHOAL_REF_MAX;
    } while (r == 0); /* 0 is no reference: after 2^48 of them, the next */
    return r;
}

/* ---- call timeouts ------------------------------------------------------
 *
 * One timer per actor, not one per call. A call's deadline is kept with it
 * in the pending list; the actor's timer is armed for the earliest
 * deadline only when a call's comes before the one armed (or none is). A
 * reply settles its call without touching the timer: when the timer fires
 * (a SHOAL_ENV_CALL_TICK to the actor itself, in its system mailbox) the
 * calls whose deadline has passed get their SHOAL_MSG_TIMEOUT, and the
 * timer is armed again for the earliest deadline left. So a stream of
 * calls answered in time starts and cancels no timer (the shared timer
 * heap and its lock were most of a call's cost), at the price of a tick
 * that finds nothing due now and then. Every list and field here is the
 * actor's own, touched only in its turns. An earlier timer that was
 * superseded still fires: its tick finds what is due, or nothing. */

static shoal_actor_ext_t *ext_of(struct shoal_ctx_s *ctx)
{
    if (ctx->b->ext == NULL)
        ctx->b->ext = calloc(1, sizeof *ctx->b->ext);
    return ctx->b->ext;
}

/* Whether a deadline `at` (UINT64_MAX: none) needs the timer armed: none
 * is (call_timer_at 0), or the one armed comes later. */
static bool arms(const shoal_actor_ext_t *x, uint64_t at)
{
    return at != UINT64_MAX && (x->call_timer_at == 0 || at < x->call_timer_at);
}

static int pending_add(struct shoal_ctx_s *ctx, shoal_ref_t ref, shoal_pid_t callee,
                       uint64_t deadline)
{
    shoal_actor_ext_t *x = ext_of(ctx);
    if (x == NULL)
        return SHOAL_ENOMEM;
    shoal_pending_call_t *nc = shoal__grow(x->calls, x->ncalls, &x->calls_cap, sizeof *nc, 4);
    if (nc == NULL)
        return SHOAL_ENOMEM;
    x->calls = nc;
    x->calls[x->ncalls++] =
        (shoal_pending_call_t){.ref = ref, .deadline = deadline, .callee = callee};
    return SHOAL_OK;
}

/* Arms the actor's call timer for `at` (ns on the precise clock). */
static int arm(struct shoal_ctx_s *ctx, shoal_actor_ext_t *x, uint64_t at)
{
    uint64_t ms = shoal__ms_until(shoal__now_ns(), at);
    shoal_env_t *t = shoal__env_new(ctx->tc, SHOAL_ENV_CALL_TICK, 0, ctx->self, 0, 0, NULL, 0);
    if (t == NULL)
        return SHOAL_ENOMEM;
    shoal_timer_t id;
    int rc = shoal__timer_start(ctx->rt, ctx->tc, ctx->self, ms, t, true, &id);
    if (rc != SHOAL_OK) {
        shoal__env_free(ctx->tc, t);
        return rc;
    }
    x->call_timer = id;
    x->call_timer_at = at;
    return SHOAL_OK;
}

/* Takes pending call i off the list. */
static void pending_remove(shoal_actor_ext_t *x, uint32_t i)
{
    x->calls[i] = x->calls[--x->ncalls];
}

bool shoal__call_settle(struct shoal_ctx_s *ctx, shoal_ref_t ref, bool timeout)
{
    (void)timeout;
    shoal_actor_ext_t *x = ctx->b->ext;
    if (x == NULL)
        return false;
    for (uint32_t i = 0; i < x->ncalls; i++) {
        if (x->calls[i].ref == ref) {
            pending_remove(x, i);
            return true;
        }
    }
    return false;
}

bool shoal__call_next_expired(struct shoal_ctx_s *ctx, uint64_t now, shoal_ref_t *ref,
                              shoal_pid_t *callee)
{
    shoal_actor_ext_t *x = ctx->b->ext;
    if (x != NULL && x->call_timer_at <= now)
        x->call_timer_at = 0; /* that timer has fired */
    for (uint32_t i = 0; x != NULL && i < x->ncalls; i++) {
        if (x->calls[i].deadline <= now) {
            *ref = x->calls[i].ref;
            *callee = x->calls[i].callee;
            pending_remove(x, i);
            return true;
        }
    }
    return false;
}

void shoal__calls_rearm(struct shoal_ctx_s *ctx)
{
    shoal_actor_ext_t *x = ctx->b->ext;
    if (x == NULL)
        return;
    uint64_t next = UINT64_MAX;
    for (uint32_t i = 0; i < x->ncalls; i++)
        if (x->calls[i].deadline < next)
            next = x->calls[i].deadline;
    /* ENOMEM: not armed now; the next call that arms covers these too. */
    if (arms(x, next))
        (void)arm(ctx, x, next);
}

void shoal__calls_cancel_all(struct shoal_ctx_s *ctx)
{
    shoal_actor_ext_t *x = ctx->b->ext;
    if (x == NULL)
        return;
    if (x->call_timer_at != 0)
        shoal__timer_cancel(ctx->rt, ctx->tc, x->call_timer);
    x->call_timer_at = 0;
    x->ncalls = 0;
}

void shoal__reply_discard(struct shoal_reply_s *reply)
{
    if (reply->env != NULL)
        shoal__env_free(reply->tc, reply->env);
    reply->env = NULL;
}

bool shoal__reply_send(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t from, shoal_pid_t to,
                       shoal_ref_t ref, struct shoal_reply_s *reply)
{
    shoal_env_t *e = reply->env;
    reply->env = NULL;
    if (e == NULL && (e = shoal__env_new(tc, SHOAL_MSG_REPLY, 0, from, ref, 0, NULL, 0)) == NULL) {
        SHOAL_STAT_ADD(tc, replies_late, 1);
        return false;
    }
    unsigned flags = shoal__env_flags(e) & SHOAL_ENV_HEAP;
    if (reply->status != SHOAL_OK) {
        shoal__env_drop_payload(e);
        flags = SHOAL_ENV_STATUS;
        e->type = (uint32_t)reply->status;
        e->size = 0;
    }
    e->from = from;
    shoal__env_set_meta(e, ref, SHOAL_MSG_REPLY, flags);
    if (shoal__deliver(rt, tc, to, e, true) != SHOAL_OK) {
        shoal__env_free(tc, e);
        SHOAL_STAT_ADD(tc, replies_late, 1);
        return false;
    }
    return true;
}

/* ---- from an actor ------------------------------------------------------ */

/* A request that expects one reply: a CALL into the user mailbox, or an
 * INSPECT into the system mailbox. */
/* A pending call with ref r to `to`, and its timeout coming: the timer is
 * armed before the request goes, so a call that is out always has its
 * timeout coming. *armed: this one armed it (to be cancelled if the
 * request cannot be sent). */
static int expect(shoal_ctx_t *ctx, shoal_pid_t to, shoal_ref_t r, uint64_t timeout_ms,
                  uint64_t *clock, bool *armed)
{
    uint64_t deadline = UINT64_MAX;
    *armed = false;
    if (timeout_ms != UINT64_MAX) {
        /* The precise clock (the tick checks against it): the coarse one
         * is cheaper, but lags by more than its resolution after the CPUs
         * were idle, and a timeout must never come early. *clock: a
         * reading the caller took for this same request (0: none yet). */
        if (*clock == 0)
            *clock = shoal__now_ns();
        uint64_t now = *clock;
        deadline = shoal__deadline_ns(now, timeout_ms);
    }
    int rc = pending_add(ctx, r, to, deadline);
    if (rc != SHOAL_OK)
        return rc;
    shoal_actor_ext_t *x = ctx->b->ext;
    if (arms(x, deadline)) {
        if ((rc = arm(ctx, x, deadline)) != SHOAL_OK) {
            shoal__call_settle(ctx, r, true);
            return rc;
        }
        *armed = true;
    }
    return SHOAL_OK;
}

/* A pending call that went nowhere: off the list, its timer (if it armed
 * one) cancelled. */
static void unexpect(shoal_ctx_t *ctx, shoal_ref_t r, bool armed)
{
    shoal_actor_ext_t *x = ctx->b->ext;
    shoal__call_settle(ctx, r, false);
    if (armed && shoal__timer_cancel(ctx->rt, ctx->tc, x->call_timer) == SHOAL_OK)
        x->call_timer_at = 0; /* an earlier one, if any, still fires */
}

int shoal__call_expect(shoal_ctx_t *ctx, shoal_pid_t callee, uint64_t timeout_ms, uint64_t *clock,
                       shoal_ref_t *ref, bool *armed)
{
    shoal_ref_t r = shoal__ref_next(ctx->rt, ctx->tc);
    int rc = expect(ctx, callee, r, timeout_ms, clock, armed);
    if (rc == SHOAL_OK)
        *ref = r;
    return rc;
}

void shoal__call_unexpect(shoal_ctx_t *ctx, shoal_ref_t ref, bool armed)
{
    unexpect(ctx, ref, armed);
}

/* A request's envelope e (whose ref is r) sent to `to`, its reply
 * expected: SHOAL_OK, or the error, e freed -- but for the payload it was
 * handed (owned), the caller's again. */
static int request_env(shoal_ctx_t *ctx, shoal_pid_t to, bool sys, shoal_env_t *e, shoal_ref_t r,
                       bool owned, uint64_t timeout_ms, shoal_ref_t *ref)
{
    bool armed;
    uint64_t clock = 0;
    int rc = expect(ctx, to, r, timeout_ms, &clock, &armed);
    if (rc != SHOAL_OK)
        goto fail;
    rc = shoal__deliver(ctx->rt, ctx->tc, to, e, sys);
    if (rc != SHOAL_OK) {
        SHOAL_STAT_ADD(ctx->tc, msgs_refused, shoal__rc_refused(rc));
        SHOAL_STAT_ADD(ctx->tc, msgs_noproc, rc == SHOAL_ENOPROC);
        unexpect(ctx, r, armed);
        goto fail;
    }
    SHOAL_STAT_ADD(ctx->tc, msgs_sent, 1);
    *ref = r;
    return SHOAL_OK;
fail:
    if (owned)
        e->meta &= ~(uint64_t)SHOAL_ENV_HEAP;
    shoal__env_free(ctx->tc, e);
    return rc;
}

static int request_async(shoal_ctx_t *ctx, shoal_pid_t to, unsigned kind, bool sys, uint32_t type,
                         const void *data, size_t size, uint64_t timeout_ms, shoal_ref_t *ref)
{
    /* A CALL in the system mailbox was sent with priority. */
    unsigned flags = sys && kind == SHOAL_MSG_CALL ? SHOAL_ENV_PRIORITY : 0;
    if ((size != 0 && data == NULL) || size > UINT32_MAX || ref == NULL)
        return SHOAL_EINVAL;
    shoal_ref_t r = shoal__ref_next(ctx->rt, ctx->tc);
    shoal_env_t *e = shoal__env_new(ctx->tc, kind, flags, ctx->self, r, type, data, size);
    if (e == NULL)
        return SHOAL_ENOMEM;
    return request_env(ctx, to, sys, e, r, false, timeout_ms, ref);
}

/* A source's call (ctx->sends set): made, then counted. Out of line, so
 * that every other actor's call pays one load and one branch for it. */
static __attribute__((noinline, cold)) int call_counted(shoal_ctx_t *ctx, shoal_pid_t to,
                                                        uint32_t type, const void *data,
                                                        size_t size, uint64_t timeout_ms,
                                                        shoal_ref_t *ref)
{
    int rc = request_async(ctx, to, SHOAL_MSG_CALL, false, type, data, size, timeout_ms, ref);
    shoal__ctx_count_send(ctx, to, rc);
    return rc;
}

SHOAL_API int shoal_call(shoal_ctx_t *ctx, shoal_pid_t to, uint32_t type, const void *data,
                         size_t size, uint64_t timeout_ms, shoal_ref_t *ref)
{
    if (__builtin_expect(ctx->sends != NULL, 0))
        return call_counted(ctx, to, type, data, size, timeout_ms, ref);
    return request_async(ctx, to, SHOAL_MSG_CALL, false, type, data, size, timeout_ms, ref);
}

SHOAL_API int shoal_call_priority(shoal_ctx_t *ctx, shoal_pid_t to, uint32_t type, const void *data,
                                  size_t size, uint64_t timeout_ms, shoal_ref_t *ref)
{
    return request_async(ctx, to, SHOAL_MSG_CALL, true, type, data, size, timeout_ms, ref);
}

int shoal__call_owned(shoal_ctx_t *ctx, shoal_pid_t to, uint32_t type, void *data, size_t size,
                      shoal_free_fn free_fn, bool priority, uint64_t timeout_ms, shoal_ref_t *ref)
{
    if (data == NULL || size > UINT32_MAX || ref == NULL)
        return SHOAL_EINVAL;
    shoal_ref_t r = shoal__ref_next(ctx->rt, ctx->tc);
    shoal_env_t *e =
        shoal__env_new_owned(ctx->tc, SHOAL_MSG_CALL, priority ? SHOAL_ENV_PRIORITY : 0, ctx->self,
                             r, type, data, size, free_fn);
    if (e == NULL)
        return SHOAL_ENOMEM;
    return request_env(ctx, to, priority, e, r, true, timeout_ms, ref);
}

SHOAL_API int shoal_inspect(shoal_ctx_t *ctx, shoal_pid_t pid, uint64_t timeout_ms,
                            shoal_ref_t *ref)
{
    return request_async(ctx, pid, SHOAL_ENV_INSPECT, true, 0, NULL, 0, timeout_ms, ref);
}

SHOAL_API int shoal_reply_set(shoal_reply_t *reply, uint32_t type, const void *data, size_t size)
{
    if ((size != 0 && data == NULL) || size > UINT32_MAX)
        return SHOAL_EINVAL;
    shoal__reply_discard(reply);
    reply->env = shoal__env_new(reply->tc, SHOAL_MSG_REPLY, 0, 0, 0, type, data, size);
    return reply->env ? SHOAL_OK : SHOAL_ENOMEM;
}

SHOAL_API void shoal_reply_error(shoal_reply_t *reply, int err)
{
    shoal__reply_discard(reply);
    reply->status = err != SHOAL_OK ? err : SHOAL_EFAILED;
}

SHOAL_API int shoal_reply(shoal_ctx_t *ctx, shoal_pid_t to, shoal_ref_t ref, uint32_t type,
                          const void *data, size_t size)
{
    if ((size != 0 && data == NULL) || size > UINT32_MAX)
        return SHOAL_EINVAL;
    shoal_env_t *e = shoal__env_new(ctx->tc, SHOAL_MSG_REPLY, 0, ctx->self, ref, type, data, size);
    if (e == NULL)
        return SHOAL_ENOMEM;
    int rc = shoal__deliver(ctx->rt, ctx->tc, to, e, true);
    if (rc != SHOAL_OK) {
        shoal__env_free(ctx->tc, e);
        SHOAL_STAT_ADD(ctx->tc, replies_late, 1); /* the caller is gone or gave up */
    }
    return rc;
}
