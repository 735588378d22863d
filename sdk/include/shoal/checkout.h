/* shoal/checkout.h - checkout pools (after Erlang's pooler): members a
 * consumer takes for itself, uses, and gives back (ABI 1.7).
 *
 * A checkout pool (shoal_pool_spec_t.kind = SHOAL_POOL_KIND_CHECKOUT) keeps
 * members that hold state tied to one backend -- a connection, a session
 * -- that one consumer at a time must use. `take` gives a free member to
 * one consumer, which then sends to and calls the member's PID directly;
 * nobody else gets that member until it is given back with `return`:
 *   SHOAL_RETURN_OK    it goes back to the free members (or, past its
 *                      max_lifetime, it is replaced by a new one; above a
 *                      max lowered while it was out, it ends);
 *   SHOAL_RETURN_FAIL  its state is not to be trusted: it is stopped and a
 *                      new one started.
 *
 * Members. spec.size (`init`) start with the pool; the pool grows on
 * demand up to spec.max_size (`max`): a take that finds no free member
 * starts one (tried add_member_retry times, each within
 * member_start_timeout_ms), and waits for it. A take gets, of the free
 * members, the one free the longest (spec.strategy SHOAL_POOL_STRATEGY_FIFO,
 * the default: use spreads over every member), or the one given back last
 * (SHOAL_POOL_STRATEGY_LIFO, ABI 1.13, poolboy's default: a light load
 * keeps the fewest members busy, and the rest age); shoal_pool_set_strategy
 * changes it live. Every cull_interval_ms, free members unused for more
 * than max_age_ms end, the longest unused first, down to `init` -- with
 * FIFO, a steady load that comes round to every member within max_age
 * keeps them all, however light; with LIFO the members it does not need
 * are culled. A member
 * older than max_lifetime_ms (+/- up to max_lifetime_jitter_ms, drawn per
 * member) is replaced when it is next returned, about to be given out, or
 * culled -- never while in use. A member that ends by itself is replaced:
 * counted killed_free if it was free, killed_in_use if it was in use (then
 * an actor holding it gets a SHOAL_MSG_EXIT for it, from = the member --
 * always after the take's answer that gave it the member -- and no longer
 * holds it; a thread is not told: its return gets SHOAL_EINVAL). One that
 * calls shoal_exit while it runs a transaction ended in use (its answer,
 * if it set one, is sent first).
 *
 * Waiting. With no free member, a taker waits in a FIFO of at most
 * queue_max takers until its timeout (UINT64_MAX: no limit); when that
 * queue is full, when queue_max is 0, or with a timeout of 0, the answer
 * is SHOAL_ENOMEMBERS at once (counted error_no_members) -- a member is
 * still started if the pool is below max, for the next taker.
 *
 * The consumer is watched. An actor that ends while it holds members gives
 * them back: SHOAL_RETURN_OK if it ended normally (or was stopped), else
 * they are destroyed and replaced (counted killed_in_use): their state is
 * unknown. A thread holds its member under a lease (lease_ms): past it the
 * member is destroyed and replaced (counted lease_expired) and the late
 * return is refused with SHOAL_ETIMEDOUT.
 *
 * Transactions (poolboy's): an ordinary send or call to a checkout pool's
 * PID is one -- the pool takes a free member (or queues it until one is
 * free), hands it the message, and gets the member back when its handler
 * returns: OK, or
 * FAIL if the handler failed (then the member is replaced). A call's reply
 * comes from the member, straight to the caller (a handler that defers
 * its reply no longer has the member to itself when it answers). At most
 * max + queue_max transactions are outstanding at once (queue_max bounds
 * the takes waiting, not these); one more is refused with
 * SHOAL_ENOMEMBERS (counted error_no_members, and unhandled) -- a sender
 * refused so may wait for room as for any receiver's
 * (shoal_runtime_send_wait, shoal_notify_room): it is told once a quarter
 * of max + queue_max is free again (ABI 1.10). A
 * transaction counts as a take. A call whose timeout passes while it is
 * still queued is dropped there, never run (poolboy's cancel_waiting:
 * counted take_timeouts and dropped; the caller has its TIMEOUT); one a
 * member has begun runs to its end (its late reply is dropped), as does
 * one the pool's actor had not read yet when the caller gave up. A send
 * (no timeout) waits as long as it takes.
 *
 * Groups: pools with the same checkout.group. shoal_take_group picks a
 * random pool of the group; if it has no free member, the one with the
 * most; if none has any, SHOAL_ENOMEMBERS (pooler's rule; counted in the
 * first pool's error_no_members). It reads the pools' free members as
 * they last published them, and starts none: a pool below max with every
 * member in use refuses a group take. A transaction on a group
 * (shoal_checkout_call_group) picks its pool the same way, but when none
 * has a free member it goes to the random one and waits there as any
 * transaction does.
 *
 * Drain (SHOAL_POOL_DRAIN): no new takes or transactions (SHOAL_ENOPROC),
 * waiting takers answered SHOAL_ESHUTDOWN at once (counted, inspect's
 * take_shutdowns); the transactions it accepted are served first, each
 * once, by members as they are free; then free members end, members in
 * use when they are returned (or their lease ends: an actor holding one
 * is waited for as long as it holds it); the pool ends after the last. A
 * transaction still queued when no member is left (they failed: none
 * starts while it drains) is dropped, counted and logged. When the
 * pool ends, its members end with it; an actor holding one gets its EXIT.
 *
 * Priority messages to the pool are its commands (shoal/pool.h);
 * SHOAL_POOL_SET_CHECKOUT changes its settings live, SHOAL_POOL_SET_STRATEGY
 * its strategy.
 */
#ifndef SHOAL_CHECKOUT_H
#define SHOAL_CHECKOUT_H

#include "shoal/pool.h"
#include "shoal/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a member comes back. */
#define SHOAL_RETURN_OK 0
#define SHOAL_RETURN_FAIL 1

/* The type of a take's successful answer: its data is a
 * shoal_checkout_member_t. */
#define SHOAL_CHECKOUT_MEMBER 0xFFFE0302u
typedef struct shoal_checkout_member_s {
    shoal_pid_t member;
    shoal_pid_t pool;
} shoal_checkout_member_t;

/* From an actor: asks `pool` for a member. Returns at once with *ref set
 * (or an error, as shoal_call: nothing was asked -- SHOAL_ENOPROC when the
 * pool has ended or has begun to drain). Exactly one answer with
 * that ref arrives later as a message: a SHOAL_MSG_REPLY of type
 * SHOAL_CHECKOUT_MEMBER (status 0: the member is the actor's until it
 * returns it, or ends), or a SHOAL_MSG_REPLY with status SHOAL_ENOMEMBERS
 * (none free, none could wait), SHOAL_ETIMEDOUT (none came within
 * timeout_ms), SHOAL_ENOPROC (the pool has ended or drains),
 * SHOAL_ESHUTDOWN (it began to drain while this take waited), SHOAL_ENOTSUP
 * (not a checkout pool) -- or a SHOAL_MSG_TIMEOUT if the pool did not
 * answer at all within timeout_ms + 1 s. A member granted after the actor
 * stopped waiting (or ended) goes back to the pool by itself. */
SHOAL_API int shoal_take(shoal_ctx_t *ctx, shoal_pid_t pool, uint64_t timeout_ms, shoal_ref_t *ref);
/* Takes a free member of `pool` now, on the calling actor's own thread,
 * without a message to the pool: SHOAL_OK (*member is the actor's, held as
 * a take's is, until it returns it or ends), SHOAL_ENOMEMBERS (none is
 * free now, or takers wait before this one: it neither waits nor queues;
 * counted error_no_members, and a member is started for the next taker
 * if the pool is below max), SHOAL_ENOPROC (no such pool, or it drains),
 * SHOAL_ENOTSUP (not a checkout pool), SHOAL_ENOMEM, SHOAL_EINVAL. A take
 * that waits is shoal_take. (poolboy's checkout(Pool, false).) ABI 1.8. */
SHOAL_API int shoal_try_take(shoal_ctx_t *ctx, shoal_pid_t pool, shoal_pid_t *member);
/* As shoal_take, from a group of pools (above). SHOAL_ENOMEMBERS at once
 * (nothing asked) when no pool of the group has a free member;
 * SHOAL_ENOPROC when there is no such group, or every pool of it drains (a
 * pool found draining is passed by: the take goes to another of the
 * group, as a reload that replaces one pool of a group needs). */
SHOAL_API int shoal_take_group(shoal_ctx_t *ctx, const char *group, uint64_t timeout_ms,
                               shoal_ref_t *ref);
/* Gives back a member the running actor took: SHOAL_OK, or SHOAL_EINVAL
 * (it does not hold that member, or `how` is neither SHOAL_RETURN_OK nor
 * SHOAL_RETURN_FAIL). An actor holds a member until it reads the member's
 * SHOAL_MSG_EXIT: a return of a member that has ended but whose EXIT is
 * still in the mailbox is SHOAL_OK (nothing is given back: the pool has
 * replaced it); after the EXIT it is SHOAL_EINVAL. */
SHOAL_API int shoal_return(shoal_ctx_t *ctx, shoal_pid_t member, int how);
/* A transaction: the call to `pool` (a checkout pool) goes to one member,
 * exclusively, which is returned when its handler has answered (FAIL if
 * it failed). Like shoal_call: one REPLY (the member's) or TIMEOUT. */
SHOAL_API int shoal_checkout_call(shoal_ctx_t *ctx, shoal_pid_t pool, uint32_t type,
                                  const void *data, size_t size, uint64_t timeout_ms,
                                  shoal_ref_t *ref);
/* A transaction on a group of pools (above): on the pool shoal_take_group
 * would pick -- a random one; if it has no free member, the one with the
 * most -- or, when none has a free member, on the random one, where it
 * waits for a member as any transaction does. Then as shoal_checkout_call.
 * SHOAL_ENOPROC when there is no such group. ABI 1.9. */
SHOAL_API int shoal_checkout_call_group(shoal_ctx_t *ctx, const char *group, uint32_t type,
                                        const void *data, size_t size, uint64_t timeout_ms,
                                        shoal_ref_t *ref);

/* From a thread that is not a dispatcher worker: takes a member, waiting
 * up to timeout_ms. SHOAL_OK (*member set; hold it at most the pool's
 * lease), SHOAL_ENOMEMBERS, SHOAL_ETIMEDOUT, SHOAL_ENOPROC, SHOAL_ESHUTDOWN
 * (the pool began to drain while it waited), SHOAL_ENOTSUP, SHOAL_EINVAL
 * (called on a dispatcher thread). */
SHOAL_API int shoal_runtime_take(shoal_runtime_t *rt, shoal_pid_t pool, uint64_t timeout_ms,
                                 shoal_pid_t *member);
/* Gives back a member this thread took from `pool`: SHOAL_OK,
 * SHOAL_ETIMEDOUT (its lease had ended: it was destroyed -- said for the
 * last 64 leases the pool ended, SHOAL_EINVAL for older ones; or the pool
 * did not answer within 10 s), SHOAL_EINVAL (this thread does not hold it
 * from that pool, or a bad `how`), SHOAL_ENOPROC (the pool has ended). */
SHOAL_API int shoal_runtime_return(shoal_runtime_t *rt, shoal_pid_t pool, shoal_pid_t member,
                                   int how);
/* A transaction from a thread: shoal_runtime_call on a checkout pool. */
SHOAL_API int shoal_runtime_checkout_call(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t type,
                                          const void *data, size_t size, uint64_t timeout_ms,
                                          shoal_answer_t *answer);

/* SHOAL_POOL_SET_CHECKOUT 0xFFFE000Eu: a priority call to a checkout pool;
 * payload a shoal_pool_checkout_update_t: its init, max and settings from
 * now on (its group is not changed). Members in use are not touched; with
 * a lower max, free and starting members past it end now, members in use
 * past it when they are returned (each counted culled). A new max_lifetime (or
 * jitter) holds for the members already there, counted from now.
 * Reply: the uint32_t 0; SHOAL_EINVAL (bad values), SHOAL_ENOTSUP (not a
 * checkout pool). */
#define SHOAL_POOL_SET_CHECKOUT 0xFFFE000Eu
typedef struct shoal_pool_checkout_update_s {
    uint32_t init, max;
    shoal_pool_checkout_t checkout;
} shoal_pool_checkout_update_t;
SHOAL_API int shoal_pool_set_checkout(shoal_runtime_t *rt, shoal_pid_t pool,
                                      const shoal_pool_checkout_update_t *update,
                                      uint64_t timeout_ms);

#ifdef __cplusplus
}
#endif
#endif
