/* commands.c - what a pool's own actor is asked: the management commands
 * (shoal/pool.h: SHOAL_POOL_ADD_WORKERS ... SET_STRATEGY) as priority sends
 * or calls, and the calls that answer with more than a number: stats, a
 * pull pool's workers, a drain answered at the end, an epic with its own
 * args, and the host's worker swap. Runs in the pool actor's turns. */
#include "pool/pool.h"
#include "pool/swap.h"
#include "pool/elastic.h"

#include <stdlib.h>
#include <string.h>

#include "actor/call.h"
#include "actor/held.h"
#include "actor/room.h"
#include "pool/checkout.h"
#include "runtime/grow.h"
#include "runtime/runtime.h"

static uint32_t payload_u32(const shoal_msg_t *msg, bool *ok)
{
    uint32_t v = 0;
    *ok = msg->size == sizeof v;
    if (*ok)
        memcpy(&v, msg->data, sizeof v);
    return v;
}

/* A command, from a priority send or call. *out: the reply's uint32. */
int shoal__pool_command(struct shoal_ctx_s *ctx, shoal_pool_t *p, const shoal_msg_t *msg,
                        uint32_t *out)
{
    bool ok;
    uint32_t v = payload_u32(msg, &ok);
    /* A checkout pool's members are taken, not sent work: of these it
     * takes only its own settings, its strategy (which free member a take
     * gets), its members' mailbox limit and drain. */
    if (p->co != NULL && msg->type != SHOAL_POOL_SET_CHECKOUT &&
        msg->type != SHOAL_POOL_SET_STRATEGY && msg->type != SHOAL_POOL_SET_MAILBOX &&
        msg->type != SHOAL_POOL_DRAIN) {
        *out = 0;
        return SHOAL_ENOTSUP;
    }
    switch (msg->type) {
    case SHOAL_POOL_SET_CHECKOUT:
        *out = 0;
        return p->co != NULL ? shoal__checkout_set(ctx, p, msg) : SHOAL_ENOTSUP;
    case SHOAL_POOL_ADD_WORKERS:
    case SHOAL_POOL_REMOVE_WORKERS:
    case SHOAL_POOL_SET_SIZE: {
        /* A draining pool is going to 0 and takes nothing more: a resize
         * is refused as a send would be, not answered with a size of 0
         * that a pool with min_size 0 could also mean. */
        if (p->state == SHOAL_POOL_DRAINING) {
            *out = 0;
            return SHOAL_ENOPROC;
        }
        uint64_t want = msg->type == SHOAL_POOL_SET_SIZE      ? v
                        : msg->type == SHOAL_POOL_ADD_WORKERS ? (uint64_t)p->target + v
                        : v > p->target                       ? 0
                                                              : p->target - v;
        *out = ok ? shoal__pool_resize(ctx, p, want) : 0;
        if (ok)
            shoal__pool_resized_by_hand(p); /* autoscale holds it until its next decision */
        return ok ? SHOAL_OK : SHOAL_EINVAL;
    }
    case SHOAL_POOL_SET_BOUNDS: {
        uint32_t b[2];
        *out = 0;
        if (msg->size != sizeof b)
            return SHOAL_EINVAL;
        memcpy(b, msg->data, sizeof b);
        int n = shoal__pool_set_bounds(ctx, p, b[0], b[1]);
        if (n < 0)
            return n;
        *out = (uint32_t)n;
        return SHOAL_OK;
    }
    case SHOAL_POOL_SET_ELASTIC: {
        shoal_pool_elastic_t el;
        *out = 0;
        if (msg->size != sizeof el)
            return SHOAL_EINVAL;
        memcpy(&el, msg->data, sizeof el);
        return shoal__pool_set_elastic(ctx, p, &el);
    }
    case SHOAL_POOL_SET_MAILBOX:
        *out = v;
        return ok ? shoal__pool_set_mailbox(ctx, p, v) : SHOAL_EINVAL;
    case SHOAL_POOL_DRAIN:
        shoal__pool_drain(ctx, p);
        *out = 0;
        return SHOAL_OK;
    case SHOAL_POOL_SET_PREFETCH: {
        int rc = ok ? SHOAL_OK : SHOAL_EINVAL;
        *out = ok ? shoal__pull_set_prefetch(p, v, &rc) : 0;
        return rc;
    }
    case SHOAL_POOL_SET_BUFFER: {
        int rc = ok ? SHOAL_OK : SHOAL_EINVAL;
        *out = ok ? shoal__pull_set_buffer(p, v, &rc) : 0;
        return rc;
    }
    case SHOAL_POOL_EPIC:
        *out = 0;
        return shoal__pull_epic(ctx, p);
    case SHOAL_POOL_SET_STRATEGY:
        *out = 0;
        if (p->pull != NULL || p->remote != NULL) /* a remote pool's child picks */
            return SHOAL_ENOTSUP;
        if (!ok || (p->co != NULL ? v != SHOAL_POOL_STRATEGY_FIFO && v != SHOAL_POOL_STRATEGY_LIFO
                                  : v > SHOAL_POOL_STRATEGY_ROUND_ROBIN))
            return SHOAL_EINVAL;
        /* relaxed: senders read it as a value on its own (forward.c), as
         * does a checkout pool's free list under its lock (checkout.h). */
        atomic_store_explicit(&p->strategy, v, memory_order_relaxed);
        p->spec.strategy = v;
        *out = v;
        return SHOAL_OK;
    default:
        return SHOAL_ENOTSUP;
    }
}

bool shoal__pool_from_thread(shoal_runtime_t *rt, shoal_pid_t from)
{
    if (from == SHOAL_PID_NONE || shoal__pid_slot(from) >= rt->max_actors)
        return false;
    shoal_actor_t *a = shoal__actor_at(rt, shoal__pid_slot(from));
    /* acquire: pairs with the release store of sys_rsv in shoal__actor_spawn:
     * a live word's record (kind) is set up. */
    uint64_t w = atomic_load_explicit(&a->sys_rsv, memory_order_acquire);
    return shoal__rsv_gen(w) == shoal__pid_gen(from) &&
           atomic_load_explicit(&a->kind, memory_order_relaxed) == SHOAL_ACTOR_WAITER;
}

/* The host's swap steps (SHOAL__POOL_SWAP...): each names its swap by the
 * token it carries (swap.c: the offer and the token). */
static int swap_call(shoal_ctx_t *ctx, shoal_pool_t *p, const shoal_msg_t *msg,
                     shoal_reply_t *reply)
{
    uint64_t token;
    if (msg->size != sizeof token) {
        shoal_reply_error(reply, SHOAL_EINVAL);
        return SHOAL_OK;
    }
    memcpy(&token, msg->data, sizeof token);
    if (msg->type == SHOAL__POOL_SWAP_ABORT) {
        if (token != 0) /* 0 would name whichever swap is prepared */
            shoal__pool_swap_abort(ctx, p, token);
        return shoal_reply_set(reply, msg->type, NULL, 0);
    }
    if (msg->type == SHOAL__POOL_SWAP_COMMIT) {
        int n = shoal__pool_swap_commit(ctx, p, token);
        if (n < 0) {
            shoal_reply_error(reply, n);
            return SHOAL_OK;
        }
        uint32_t replaced = (uint32_t)n;
        return shoal_reply_set(reply, msg->type, &replaced, sizeof replaced);
    }
    int rc = shoal__pool_swap_prepare(ctx, p, token, msg->from, msg->ref);
    if (rc == SHOAL_DEFER)
        return SHOAL_DEFER;
    shoal_reply_error(reply, rc);
    return SHOAL_OK;
}

/* SHOAL_POOL_WORKER_STATS (shoal/pull.h): element size, count, records. */
static int worker_stats(shoal_pool_t *p, shoal_reply_t *reply)
{
    if (p->pull == NULL) {
        shoal_reply_error(reply, SHOAL_ENOTSUP);
        return SHOAL_OK;
    }
    size_t cap = 0, n = shoal__pull_workers(p, NULL, 0);
    uint32_t *buf = NULL;
    do { /* members come and go meanwhile: until they fit */
        cap = n + 8;
        free(buf);
        buf = malloc(2 * sizeof *buf + cap * sizeof(shoal_pull_worker_stats_t));
        if (buf == NULL) {
            shoal_reply_error(reply, SHOAL_ENOMEM);
            return SHOAL_OK;
        }
        n = shoal__pull_workers(p, (shoal_pull_worker_stats_t *)(void *)(buf + 2), cap);
    } while (n > cap);
    buf[0] = (uint32_t)sizeof(shoal_pull_worker_stats_t);
    buf[1] = (uint32_t)n;
    int rc = shoal_reply_set(reply, SHOAL_POOL_WORKER_STATS, buf,
                             2 * sizeof *buf + n * sizeof(shoal_pull_worker_stats_t));
    free(buf);
    return rc;
}

/* DRAIN callers that have ended (a blocking call that timed out ends its
 * waiter) are answered by nobody: forgotten when the list is full, before
 * it grows, so a drain asked again and again keeps a place per caller that
 * still waits, not per call. */
static void forget_gone_waiters(shoal_ctx_t *ctx, shoal_pool_t *p)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < p->nwaiters; i++)
        if (shoal__room_waiter_alive(ctx->rt, p->waiters[i].from))
            p->waiters[k++] = p->waiters[i];
    p->nwaiters = k;
}

int shoal__pool_call(shoal_ctx_t *ctx, shoal_pool_t *p, const shoal_msg_t *msg,
                     shoal_reply_t *reply)
{
    if (msg->type == SHOAL_POOL_STATS) {
        shoal_pool_stats_t st;
        shoal__pool_fill_stats(ctx, p, &st);
        return shoal_reply_set(reply, SHOAL_POOL_STATS, &st, sizeof st);
    }
    if (msg->type == SHOAL_POOL_WORKER_STATS)
        return worker_stats(p, reply);
    if (msg->type == SHOAL__CHECKOUT_TAKE) {
        if (p->co == NULL) {
            shoal_reply_error(reply, SHOAL_ENOTSUP);
            return SHOAL_OK;
        }
        return shoal__checkout_take(ctx, p, msg, reply);
    }
    if (msg->type == SHOAL__CHECKOUT_RETURN) { /* a thread's: it hears how it went */
        int rc = p->co != NULL ? shoal__checkout_return(ctx, p, msg) : SHOAL_ENOTSUP;
        if (rc != SHOAL_OK)
            shoal_reply_error(reply, rc);
        return SHOAL_OK;
    }
    if (msg->type == SHOAL__POOL_EPIC_ARGS) {
        shoal_pull_epic_args_t ea;
        if (msg->size != sizeof ea) { /* not the host's: nothing to take over */
            shoal_reply_error(reply, SHOAL_EINVAL);
            return SHOAL_OK;
        }
        memcpy(&ea, msg->data, sizeof ea);
        /* Ours now, whatever follows: the box says so to the function that
         * frees it after this handler (host/agent.c: epic_box_free). */
        shoal_pull_epic_args_t *box = (shoal_pull_epic_args_t *)(uintptr_t)msg->data;
        box->args = NULL;
        box->free_args = NULL;
        int32_t status = p->pull != NULL ? shoal__pull_epic_with(ctx, p, &ea) : SHOAL_ENOTSUP;
        if (p->pull == NULL)
            ea.free_args(ea.args);
        return shoal_reply_set(reply, SHOAL__POOL_EPIC_ARGS, &status, sizeof status);
    }
    if (msg->type == SHOAL__POOL_GO) { /* the host's, from its thread (pool.h) */
        if (!shoal__pool_from_thread(ctx->rt, msg->from)) {
            shoal_reply_error(reply, SHOAL_ENOTSUP);
            return SHOAL_OK;
        }
        shoal__pool_go(ctx, p, msg->data, msg->size);
        return shoal_reply_set(reply, SHOAL__POOL_GO, NULL, 0);
    }
    if (msg->type == SHOAL__POOL_HAND_OVER) { /* the host's, from its thread (pool.h) */
        if (!shoal__pool_from_thread(ctx->rt, msg->from) || p->pull == NULL ||
            p->spec.source == NULL) {
            shoal_reply_error(reply, SHOAL_ENOTSUP);
            return SHOAL_OK;
        }
        shoal_pull_handover_t h;
        shoal__pull_hand_over(ctx, p, &h);
        return shoal_reply_set(reply, SHOAL__POOL_HAND_OVER, &h, sizeof h);
    }
    if (msg->type == SHOAL_POOL_DRAIN) {
        if (p->nwaiters == p->waiters_cap)
            forget_gone_waiters(ctx, p);
        struct shoal_drain_waiter_s *w =
            shoal__grow(p->waiters, p->nwaiters, &p->waiters_cap, sizeof *w, 4);
        if (w == NULL) {
            shoal_reply_error(reply, SHOAL_ENOMEM);
            return SHOAL_OK;
        }
        p->waiters = w;
        p->waiters[p->nwaiters++] = (struct shoal_drain_waiter_s){msg->from, msg->ref};
        shoal__pool_drain(ctx, p); /* may answer at once */
        return SHOAL_DEFER;
    }
    if (msg->type == SHOAL__POOL_SWAP || msg->type == SHOAL__POOL_SWAP_COMMIT ||
        msg->type == SHOAL__POOL_SWAP_ABORT)
        return swap_call(ctx, p, msg, reply);
    uint32_t out;
    int rc = shoal__pool_command(ctx, p, msg, &out);
    if (rc == SHOAL_ENOTSUP) {
        const shoal_behaviour_t *m = p->spec.manager;
        if (m != NULL && m->handle_call != NULL)
            return m->handle_call(ctx, p->manager_state, msg, reply);
        shoal_reply_error(reply, SHOAL_ENOTSUP);
        return SHOAL_OK;
    }
    if (rc != SHOAL_OK) {
        shoal_reply_error(reply, rc);
        return SHOAL_OK;
    }
    return shoal_reply_set(reply, msg->type, &out, sizeof out);
}
