/* checkout_fast.h - a checkout pool's takes, returns and transactions on
 * the consumer's own thread (checkout_fast.c), and a transaction whose
 * caller gave up; the pool and its lock are checkout.h. */
#ifndef SHOAL_POOL_CHECKOUT_FAST_H
#define SHOAL_POOL_CHECKOUT_FAST_H

#include "pool/checkout.h"

/* checkout_fast.c: takes, returns and transactions on the caller's own
 * thread, under the lock, for the cases that need nothing of the pool's
 * actor (checkout.h: who touches what). SHOAL__CO_SLOW: the caller goes
 * the actor's way instead (a message), nothing was changed. */
#define SHOAL__CO_SLOW 1
/* A free member for actor `taker`, if one is free now and no taker waits
 * before it: SHOAL_OK (*member and *seat set: it is the taker's, counted as
 * a take), SHOAL_ENOMEMBERS (none), SHOAL_ENOPROC (the pool drains or has
 * ended). A free member past its lifetime is left for the actor to replace
 * (it is asked to). */
int shoal__co_fast_take(shoal_runtime_t *rt, struct shoal_tcache_s *tc, struct shoal_pool_s *p,
                        shoal_pid_t taker, shoal_pid_t *member, uint32_t *seat);
/* `from` gives back `member` OK: from its holder (an actor) or, for a
 * transaction's member, the member itself. seat: where the caller last
 * knew it (SHOAL_CO_NIL: look for it). To the first taker waiting (an
 * actor's take, a transaction), else to the free FIFO: SHOAL_OK;
 * SHOAL__CO_SLOW (the actor must: a thread waits first, the pool drains,
 * the member is past its lifetime or above max); SHOAL_EINVAL (`from`
 * does not hold it: it ended meanwhile, say). */
int shoal__co_fast_return(shoal_runtime_t *rt, struct shoal_tcache_s *tc, struct shoal_pool_s *p,
                          shoal_pid_t member, uint32_t seat, shoal_pid_t from);
/* shoal_take on the taker's own thread (ref: its pending call's,
 * shoal__call_expect): a free member when nobody waits first (the answer,
 * a grant, goes to the taker at once), else the taker waits in the queue
 * (the actor's tick watches its deadline; the actor is asked to start a
 * member for it if the pool may grow), else it is answered
 * SHOAL_ENOMEMBERS (counted; a member started for the next below max).
 * Every answer is a REPLY to `ref`, from the pool, as the actor would have
 * sent it: SHOAL_OK. SHOAL_ENOPROC, nothing sent: the pool drains (its
 * drain closed it after the taker found it open), for the taker to say at
 * once. now: the precise clock read at the take's start (0: not read;
 * read here if needed). */
int shoal__co_take_here(shoal_runtime_t *rt, struct shoal_tcache_s *tc, struct shoal_pool_s *p,
                        shoal_pid_t taker, shoal_ref_t ref, uint64_t timeout_ms, uint64_t now);
/* Transaction e (admitted): on a free member now when no taker waits
 * (in the member's mailbox), else into the queue behind those waiting:
 * SHOAL_OK. SHOAL_ENOPROC: the pool drains. SHOAL__CO_SLOW: to the pool's
 * own mailbox, to wait there -- the queue could not grow (no memory), or
 * transactions sent there before still are (txn_mailed, which counts this
 * one: a mailbox that refuses it gives it back, shoal__co_mailed_done). */
int shoal__co_fast_txn(shoal_runtime_t *rt, struct shoal_tcache_s *tc, struct shoal_pool_s *p,
                       shoal_env_t *e);
/* A transaction counted in txn_mailed has left the count: read from the
 * pool's mailbox by its actor, or refused by it. The lock held. */
void shoal__co_mailed_done(shoal_checkout_t *co);

/* A transaction's caller gave up (ops->call_gone, on the caller's thread):
 * a cast to the pool from the caller, into the pool's own mailbox (after
 * the transaction, if it waits there still); payload the call's
 * shoal_ref_t. Still queued, it is dropped unrun (counted take_timeouts
 * and dropped); begun or done, nothing changes. */
#define SHOAL__CHECKOUT_CALL_GONE 0xFFFE010Du
static inline bool shoal__co_is_call_gone(const shoal_env_t *e)
{
    return e->type == SHOAL__CHECKOUT_CALL_GONE && shoal__env_kind(e) == SHOAL_MSG_CAST;
}
/* The pool's actor, on SHOAL__CHECKOUT_CALL_GONE: true if a queued
 * transaction of caller's with that ref was dropped. */
bool shoal__co_txn_gone(struct shoal_ctx_s *ctx, struct shoal_pool_s *p, shoal_pid_t caller,
                        shoal_ref_t ref);
/* With the lock: that transaction, if it still waits in the queue, off it
 * (counted take_timeouts) for its caller's thread or the actor to forget;
 * NULL if it does not wait there. */
shoal_env_t *shoal__co_txn_unqueue(shoal_checkout_t *co, shoal_pid_t caller, shoal_ref_t ref);
/* Without the lock, on any thread: a transaction taken off the queue
 * because its caller stopped waiting, dropped unrun (counted dropped, the
 * ledger settles it; its admission given back). */
void shoal__co_txn_forget(shoal_runtime_t *rt, struct shoal_tcache_s *tc, struct shoal_pool_s *p,
                          shoal_env_t *m);

#endif
