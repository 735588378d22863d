/* call.h - calls, replies, and the bookkeeping of pending calls. */
#ifndef SHOAL_ACTOR_CALL_H
#define SHOAL_ACTOR_CALL_H

#include <stdbool.h>

#include "actor/ctx.h"
#include "shoal/runtime.h"

/* A reply or timeout with `ref` arrived: true if the call was still pending
 * (it is now settled), false if it was already settled (the message is
 * late and dropped). */
bool shoal__call_settle(struct shoal_ctx_s *ctx, shoal_ref_t ref, bool timeout);

/* The actor's call timer has fired (SHOAL_ENV_CALL_TICK) at time now: takes
 * one pending call whose deadline has passed off the list (its ref and
 * callee out) and returns true; false when none is left. The caller hands
 * each to the behaviour as SHOAL_MSG_TIMEOUT, then calls
 * shoal__calls_rearm. */
bool shoal__call_next_expired(struct shoal_ctx_s *ctx, uint64_t now, shoal_ref_t *ref,
                              shoal_pid_t *callee);
/* After a tick: the timer armed for the earliest deadline left, if none
 * comes before it. */
void shoal__calls_rearm(struct shoal_ctx_s *ctx);

/* A call the running actor makes without a request going out (the callee
 * answers through another channel: a checkout pool's take served on the
 * caller's own thread): a fresh *ref pending, its timeout coming after
 * timeout_ms (UINT64_MAX: none), as for shoal_call. *clock: the precise
 * clock's reading the deadline counts from; 0 on entry: read here (and
 * left in *clock for the caller's next use in the same request). *armed:
 * whether it armed the actor's call timer (for shoal__call_unexpect).
 * SHOAL_OK, SHOAL_ENOMEM. */
int shoal__call_expect(struct shoal_ctx_s *ctx, shoal_pid_t callee, uint64_t timeout_ms,
                       uint64_t *clock, shoal_ref_t *ref, bool *armed);
/* A call shoal__call_expect made that will have no answer (its callee
 * said no at once): off the pending list, the timer it armed cancelled. */
void shoal__call_unexpect(struct shoal_ctx_s *ctx, shoal_ref_t ref, bool armed);

/* As shoal_call (or shoal_call_priority: priority), handing `data` (a heap
 * buffer of `size` bytes) over as shoal_send_owned does: on SHOAL_OK the
 * runtime owns it and calls free_fn(data) once the call is handled or
 * dropped -- its callee ended with it queued too; on any error the caller
 * still owns it. The callee's handler may write into it (msg->data): the
 * free comes after the handler, on a thread that ran it or learned of it
 * through the mailbox. */
int shoal__call_owned(struct shoal_ctx_s *ctx, shoal_pid_t to, uint32_t type, void *data,
                      size_t size, shoal_free_fn free_fn, bool priority, uint64_t timeout_ms,
                      shoal_ref_t *ref);

/* The actor ends: its pending calls are dropped, its call timer cancelled. */
void shoal__calls_cancel_all(struct shoal_ctx_s *ctx);

/* Sends what `reply` holds (or an empty reply, or its error status) to
 * `to` as the reply to `ref`: true if delivered; a caller that is gone is
 * counted (replies_late). */
bool shoal__reply_send(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t from, shoal_pid_t to,
                       shoal_ref_t ref, struct shoal_reply_s *reply);
void shoal__reply_discard(struct shoal_reply_s *reply);
/* shoal_runtime_send_wait from a thread that is no dispatcher's, after an
 * attempt already made (rc, counted as any refused send is): room waited
 * for and the send tried again until deadline (ns). A caller that tried a
 * faster way first (a task pool's submit) so counts one refusal for it,
 * as shoal_runtime_send_wait does, not one more. */
int shoal__send_wait_after(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t to, uint32_t type,
                           const void *data, size_t size, uint64_t deadline, int rc);

/* Answers an INSPECT request (inspect.c); returns the behaviour's inspect
 * callback's result. */
int shoal__inspect_answer(struct shoal_ctx_s *ctx, shoal_env_t *req);
/* Adds a field whose value is JSON the caller has formed (an array). */
void shoal__inspect_raw(shoal_inspect_t *out, const char *key, const char *json);

/* Children bookkeeping (ctx.c). */
/* Records a child of the running actor (linked: stopped when it ends). On
 * SHOAL_ENOMEM the child cannot be tracked, so it is stopped at once --
 * but it may have run meanwhile: a spawner that frees what it gave the
 * child when this fails takes the room first (shoal__children_reserve). */
int shoal__children_add(struct shoal_ctx_s *ctx, shoal_pid_t child);
/* Room for one more child of the running actor: after SHOAL_OK, the next
 * shoal__children_add cannot fail. SHOAL_OK, SHOAL_ENOMEM. */
int shoal__children_reserve(struct shoal_ctx_s *ctx);
void shoal__children_remove(struct shoal_ctx_s *ctx, shoal_pid_t child);
/* An envelope that can no longer be handled (its receiver ends): a call is
 * answered with SHOAL_ENOPROC, a message counted as dropped; the payload is
 * released, the envelope itself is the caller's (actor.c). */
void shoal__dead_letter(struct shoal_ctx_s *ctx, shoal_env_t *e);

/* shoal_runtime_call_priority from a thread that is not an actor, asking
 * interrupted(arg) (NULL: never) before it first waits and then at least
 * every SHOAL_ASK_EVERY_MS (sched/futex.h): when it says true the call is
 * given up, as at its timeout (a reply that comes later is dropped; a call
 * not yet handled is not handled), and SHOAL_ESHUTDOWN returned. The
 * host's reload waits so (host.h: interrupted). */
int shoal__runtime_call_until(shoal_runtime_t *rt, shoal_pid_t to, uint32_t type, const void *data,
                              size_t size, uint64_t timeout_ms, bool (*interrupted)(void *),
                              void *arg, shoal_answer_t *answer);

#endif
