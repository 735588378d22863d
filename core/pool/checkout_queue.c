/* checkout_queue.c - a checkout pool's queue of takers (checkout.h): the
 * takes and transactions waiting for a member, in the order they came --
 * put, popped, dropped when their caller gives up, answered when they time
 * out, when the pool drains or its starts keep failing, or when queue_max
 * is lowered. Under the pool's lock, as checkout_take.c. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "actor/call.h"
#include "actor/send.h"
#include "pool/checkout.h"
#include "pool/checkout_fast.h"
#include "pool/pool.h"
#include "runtime/runtime.h"

/* ---- the queue of takers ----------------------------------------------- */

static int queue_grow(shoal_checkout_t *co)
{
    uint32_t cap = co->qcap ? co->qcap * 2 : 8; /* a power of two (shoal__co_qat) */
    if (cap == 0)
        return SHOAL_ENOMEM;
    shoal_co_taker_t *q = aligned_alloc(64, (size_t)cap * sizeof *q); /* a line each */
    if (q == NULL)
        return SHOAL_ENOMEM;
    for (uint32_t k = 0; k < co->qlen; k++)
        q[k] = *shoal__co_qat(co, k);
    free(co->q);
    co->q = q;
    co->qcap = cap;
    co->qhead = 0;
    return SHOAL_OK;
}

/* Drops the answered (gone) entries at the queue's front. */
static void queue_trim_front(shoal_checkout_t *co)
{
    while (co->qlen != 0 && co->q[co->qhead].gone) {
        co->qhead = (co->qhead + 1) & (co->qcap - 1);
        co->qlen--;
    }
}

/* Drops the answered (gone) entries, keeping the order of the rest. */
static void queue_compact(shoal_checkout_t *co)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < co->qlen; k++) {
        shoal_co_taker_t t = *shoal__co_qat(co, k);
        if (!t.gone)
            *shoal__co_qat(co, n++) = t;
    }
    co->qlen = n;
}

/* Queues t at the back, or at the front (a transaction handed back by a
 * member that ended before it: it was first). */
int shoal__co_queue_put(shoal_checkout_t *co, const shoal_co_taker_t *t, bool front)
{
    if (co->qlen == co->qcap && queue_grow(co) != SHOAL_OK)
        return SHOAL_ENOMEM;
    if (front) {
        co->qhead = (co->qhead - 1) & (co->qcap - 1);
        co->q[co->qhead] = *t;
    } else {
        *shoal__co_qat(co, co->qlen) = *t;
    }
    co->qlen++;
    co->qlive++;
    if (t->txn == NULL)
        co->qtakers++;
    return SHOAL_OK;
}

/* The first live taker, taken off the queue; false when none waits. */
bool shoal__co_queue_pop(shoal_checkout_t *co, shoal_co_taker_t *out)
{
    while (co->qlen != 0) {
        const shoal_co_taker_t *t = &co->q[co->qhead];
        co->qhead = (co->qhead + 1) & (co->qcap - 1);
        co->qlen--;
        if (t->gone)
            continue;
        co->qlive--;
        if (t->txn == NULL)
            co->qtakers--;
        *out = *t; /* the cell stays as it is until a put: no copy of it first */
        return true;
    }
    return false;
}

void shoal__co_answer_error(struct shoal_ctx_s *ctx, shoal_pid_t to, shoal_ref_t ref, int status)
{
    struct shoal_reply_s reply = {.tc = ctx->tc, .env = NULL, .status = status};
    shoal__reply_send(ctx->rt, ctx->tc, ctx->self, to, ref, &reply);
}

/* A transaction that will not run: a call is answered `status` (0: not
 * at all, its caller stopped waiting; SHOAL_ENOPROC: dead-lettered, as a
 * cast always is), counted dropped -- the ledger settles it -- and its
 * admission given back. */
static void txn_unrun(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_env_t *m, int status)
{
    if (status == 0 && shoal__env_kind(m) == SHOAL_MSG_CALL) {
        shoal__co_txn_forget(ctx->rt, ctx->tc, p, m);
        return;
    }
    if (status == SHOAL_ENOPROC || shoal__env_kind(m) != SHOAL_MSG_CALL)
        shoal__dead_letter(ctx, m);
    else
        shoal__co_answer_error(ctx, m->from, shoal__env_ref(m), status);
    shoal__env_free(ctx->tc, m); /* and its payload, if dead_letter left it */
    shoal__pool_count_dropped(ctx->tc, p);
    shoal__co_txn_out(ctx->rt, ctx->tc, p);
}

void shoal__co_txn_forget(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p, shoal_env_t *m)
{
    SHOAL_STAT_ADD(tc, msgs_dropped, 1);
    shoal__env_free(tc, m);
    shoal__pool_count_dropped(tc, p);
    shoal__co_txn_out(rt, tc, p);
}

void shoal__co_txn_drop(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_env_t *m)
{
    txn_unrun(ctx, p, m, SHOAL_ENOPROC);
}

shoal_env_t *shoal__co_txn_unqueue(shoal_checkout_t *co, shoal_pid_t caller, shoal_ref_t ref)
{
    for (uint32_t k = 0; k < co->qlen; k++) {
        shoal_co_taker_t *t = shoal__co_qat(co, k);
        if (t->gone || t->txn == NULL || t->from != caller ||
            shoal__env_kind(t->txn) != SHOAL_MSG_CALL || shoal__env_ref(t->txn) != ref)
            continue;
        shoal_env_t *m = t->txn;
        t->gone = true;
        t->txn = NULL;
        co->qlive--;
        shoal__co_count(co, SHOAL_CO_TAKE_TIMEOUTS, 1);
        /* Callers give up in about the order they came: the front stays
         * live, so the next one's search starts where it is. */
        queue_trim_front(co);
        return m;
    }
    return NULL;
}

bool shoal__co_txn_gone(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pid_t caller,
                        shoal_ref_t ref)
{
    shoal_env_t *m = shoal__co_txn_unqueue(p->co, caller, ref);
    if (m != NULL)
        txn_unrun(ctx, p, m, 0); /* no answer: its caller stopped waiting */
    return m != NULL;
}

/* A take waiting in the queue (not a transaction) is answered `status` now,
 * counted in counts[counter], and skipped from then on. */
static void take_refuse(struct shoal_ctx_s *ctx, shoal_checkout_t *co, shoal_co_taker_t *t,
                        unsigned counter, int status)
{
    t->gone = true;
    co->qlive--;
    co->qtakers--;
    shoal__co_count(co, counter, 1);
    shoal__co_answer_error(ctx, t->from, t->ref, status);
}

/* Every queued taker is answered `status` (takes) or dropped (transactions). */
uint32_t shoal__co_queue_flush(struct shoal_ctx_s *ctx, shoal_pool_t *p, int status)
{
    shoal_co_taker_t t;
    uint32_t dropped = 0;
    while (shoal__co_queue_pop(p->co, &t)) {
        if (t.txn != NULL) {
            shoal__co_txn_drop(ctx, p, t.txn);
            dropped++;
        } else {
            shoal__co_answer_error(ctx, t.from, t.ref, status);
        }
    }
    return dropped;
}

uint32_t shoal__co_drop_unserved(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    uint32_t lost = shoal__co_queue_flush(ctx, p, SHOAL_ENOPROC) + shoal__co_mailbox_txns(ctx);
    if (lost != 0)
        shoal__log(ctx->rt, SHOAL_LOG_WARN, ctx->self, p->name,
                   "ended with %" PRIu32 " transaction%s not run (queued for a member): dropped",
                   lost, lost == 1 ? "" : "s");
    return lost;
}

/* The pool drains: no member is given to a take any more (its taker would
 * hold it as long as it liked), so the takes waiting hear it now. */
void shoal__co_queue_shut_takes(struct shoal_ctx_s *ctx, shoal_checkout_t *co)
{
    for (uint32_t k = 0; k < co->qlen; k++) {
        shoal_co_taker_t *t = shoal__co_qat(co, k);
        if (t->gone || t->txn != NULL)
            continue;
        take_refuse(ctx, co, t, SHOAL_CO_TAKE_SHUTDOWNS, SHOAL_ESHUTDOWN);
    }
}

uint32_t shoal__co_mailbox_txns(const struct shoal_ctx_s *ctx)
{
    /* relaxed: the reserved count is the owner's to read here, and final
     * after its own close (actor/mailbox.h); ctx->deq is this turn's count
     * of pops (actor/turn.c). */
    uint64_t w = atomic_load_explicit(&ctx->a->user_rsv, memory_order_relaxed);
    return shoal__rsv_depth(w, ctx->deq);
}

/* Takers past their deadline are answered SHOAL_ETIMEDOUT. */
void shoal__co_queue_expire(struct shoal_ctx_s *ctx, shoal_checkout_t *co, uint64_t now)
{
    for (uint32_t k = 0; k < co->qlen; k++) {
        shoal_co_taker_t *t = shoal__co_qat(co, k);
        if (t->gone || t->deadline > now)
            continue;
        take_refuse(ctx, co, t, SHOAL_CO_TAKE_TIMEOUTS, SHOAL_ETIMEDOUT);
    }
    queue_trim_front(co);
    if (co->qlen > 2 * co->qlive + 8) /* answered ones behind a waiter: squeezed out */
        queue_compact(co);
}

/* No member will come for the takers waiting (starts keep failing): takes
 * and transactions are answered SHOAL_ENOMEMBERS. */
void shoal__co_queue_fail_takes(struct shoal_ctx_s *ctx, shoal_checkout_t *co)
{
    for (uint32_t k = 0; k < co->qlen; k++) {
        shoal_co_taker_t *t = shoal__co_qat(co, k);
        if (t->gone)
            continue;
        if (t->txn != NULL) {
            t->gone = true;
            co->qlive--;
            shoal__co_count(co, SHOAL_CO_NO_MEMBERS, 1); /* no member will come for it */
            txn_unrun(ctx, co->pool, t->txn, SHOAL_ENOMEMBERS);
            t->txn = NULL;
            continue;
        }
        take_refuse(ctx, co, t, SHOAL_CO_NO_MEMBERS, SHOAL_ENOMEMBERS);
    }
}

void shoal__co_queue_trim(struct shoal_ctx_s *ctx, shoal_checkout_t *co)
{
    while (co->qtakers > co->cfg->queue_max) { /* the newest takers beyond it */
        shoal_co_taker_t *t = NULL;
        for (uint32_t k = co->qlen; k-- > 0;) {
            shoal_co_taker_t *c = shoal__co_qat(co, k);
            if (!c->gone && c->txn == NULL) {
                t = c;
                break;
            }
        }
        take_refuse(ctx, co, t, SHOAL_CO_NO_MEMBERS, SHOAL_ENOMEMBERS);
    }
}
