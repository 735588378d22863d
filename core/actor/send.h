/* send.h - delivering envelopes and making actors runnable. */
#ifndef SHOAL_ACTOR_SEND_H
#define SHOAL_ACTOR_SEND_H

#include <stdbool.h>

#include "actor/actor.h"
#include "runtime/tcache.h"

/* Puts e into to's user (sys == false) or system mailbox and schedules the
 * receiver if it was idle. On SHOAL_OK the mailbox owns e; on error
 * (SHOAL_ENOPROC, SHOAL_EFULL) the caller still does. Counts nothing. */
int shoal__deliver(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t to, shoal_env_t *e,
                   bool sys);

/* As shoal__deliver into the user mailbox, ignoring its limit: a pool
 * placing messages a dead worker handed back (pool/pool.c). */
int shoal__deliver_over(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t to, shoal_env_t *e);
/* Moves a from IDLE to SCHEDULED if it is idle, and pushes it (or wakes the
 * thread waiting on it): true if this call did. Its load of the schedule
 * word is seq_cst (actor.h): a sender's half of a Dekker pair. */
bool shoal__schedule(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_actor_t *a);

/* The common body of every public send: copy (or take) the payload, deliver,
 * count the outcome. data_owned/free_fn: hand-over instead of copy. */
int shoal__send(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t from, shoal_pid_t to,
                uint32_t type, const void *data, size_t size, bool priority, void *data_owned,
                shoal_free_fn free_fn);

/* shoal_send_many's body: n copied messages of `size` bytes each, from
 * data, to `to`, in order; *sent (may be NULL) gets how many were taken.
 * Counts as n sends that stop at the first refusal: the taken ones as
 * sent, that refusal once. */
int shoal__send_many(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t from, shoal_pid_t to,
                     uint32_t type, const void *data, size_t size, size_t n, size_t *sent);

/* For a kind's route_many (group.h): puts envs[0 .. n) into the user
 * mailbox of the plain actor a (live as `to`, as far as the caller knows),
 * as many as its limit takes, with one reservation and one push, each
 * flagged `flags` first; *took of them. SHOAL_OK (all), SHOAL_EFULL (not
 * all; maybe none), SHOAL_ENOPROC, SHOAL_EBUSY (max_queued). */
int shoal__deliver_many_plain(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_actor_t *a,
                              shoal_pid_t to, shoal_env_t **envs, uint32_t n, uint32_t flags,
                              uint32_t *took);
/* Links envs[0 .. n) in that order through their nodes (before a push). */
void shoal__env_link(shoal_env_t **envs, uint32_t n);

/* Asks `to` (any receiver) for one SHOAL_MSG_ROOM to waiter when it has
 * room (room.h; a group's kind answers for a group: group.h ops->room).
 * SHOAL_OK, SHOAL_ENOTSUP (it cannot tell), SHOAL_ENOPROC, SHOAL_ENOMEM,
 * SHOAL_EOVERLOAD (a pool's max_waiting wait already). */
int shoal__room_request(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t to,
                        shoal_pid_t waiter);
/* Takes waiter (a thread's, that gave up) off to's waiters, wherever they
 * are kept (a group's kind, or the registry of room.h). */
void shoal__room_withdraw(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t to,
                          shoal_pid_t waiter);
/* caller's call `ref` to `to` timed out: if `to` is a group whose kind
 * keeps calls waiting, it is told (ops->call_gone), so one not yet begun
 * is never run. Any thread; nothing for any other receiver. */
void shoal__call_gone(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t to, shoal_pid_t caller,
                      shoal_ref_t ref);

/* Sends a system message of kind SHOAL_ENV_STOP / SHOAL_MSG_EXIT etc. with no
 * payload; returns the delivery result (the envelope is freed on error).
 * Its envelope may be one of the runtime's reserve (envelope.c). */
/* A priority cast of a small payload (<= SHOAL_INLINE_MAX) whose loss would
 * lose what it stands for -- a member given back to its pool: its envelope
 * may be one of the runtime's reserve (envelope.c: THE RESERVE). As
 * shoal__send's result; SHOAL_ENOMEM only when the reserve is empty too. */
int shoal__send_reserved(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t from, shoal_pid_t to,
                         uint32_t type, const void *data, size_t size);
int shoal__send_system(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t to, unsigned kind,
                       shoal_pid_t from, uint32_t type);

#endif
