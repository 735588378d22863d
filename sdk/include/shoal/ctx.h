/* shoal/ctx.h - what a handler can do, through the context it is given.
 *
 * Every function here takes the ctx passed to the running callback and may
 * only be called from inside that callback, on that thread. A ctx is never
 * valid after the callback returns.
 */
#ifndef SHOAL_CTX_H
#define SHOAL_CTX_H

#include "shoal/behaviour.h"
#include "shoal/error.h"
#include "shoal/message.h"
#include "shoal/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The running actor's own PID. */
SHOAL_API shoal_pid_t shoal_self(const shoal_ctx_t *ctx);

/* The PID registered under `name` by the host (e.g. a pool's name), or
 * SHOAL_PID_NONE. */
SHOAL_API shoal_pid_t shoal_whereis(shoal_ctx_t *ctx, const char *name);

/* The runtime the actor runs on. */
SHOAL_API shoal_runtime_t *shoal_ctx_runtime(const shoal_ctx_t *ctx);

/* Sends a copy of `size` bytes at `data` as message `type` to `to`. Returns
 * at once: SHOAL_OK (queued), SHOAL_EFULL (that mailbox is at its limit),
 * SHOAL_ENOPROC (no such actor), SHOAL_EINVAL, SHOAL_ENOMEM. The caller keeps
 * `data`. Messages from one sender to one actor arrive in order.
 *
 * A pool with `isolation: process` copies each message into a ring shared
 * with its child process, which carries at most 524,240 bytes of payload
 * (512 KiB less 48): a larger message is refused with SHOAL_EINVAL, for
 * good (waiting for room cannot help; counted in the pool's
 * messages_unhandled), where an in-process pool would take it. The same
 * bound holds for calls to such a pool and for what its workers send back:
 * a send too large is refused so, a reply too large reaches its caller as
 * the status SHOAL_EINVAL. */
SHOAL_API int shoal_send(shoal_ctx_t *ctx, shoal_pid_t to, uint32_t type, const void *data,
                         size_t size);

/* As shoal_send, but hands over `data` (a heap buffer of `size` bytes): on
 * SHOAL_OK the runtime owns it and calls free_fn(data) once it is handled or
 * dropped; on any error the caller still owns it. */
SHOAL_API int shoal_send_owned(shoal_ctx_t *ctx, shoal_pid_t to, uint32_t type, void *data,
                               size_t size, shoal_free_fn free_fn);

/* Sends n messages of one type to `to` as one step: message i is a copy of
 * the `size` bytes at (const char *)data + i * size. Exactly as n calls of
 * shoal_send in a row that stop at the first refusal: the first *sent
 * (may be NULL) are taken, in order (a pool spreads them over its workers
 * as it would single sends); SHOAL_OK when all n were, else the error the
 * next one met (SHOAL_EFULL, SHOAL_EBUSY, SHOAL_ENOPROC, SHOAL_ENOMEM,
 * SHOAL_EINVAL), counted as one refusal. Cheaper than n sends: a receiver
 * takes a run of them with one reservation and one push, and a pool's
 * route is found once. The caller keeps `data`. Any thread that runs the
 * actor (a handler). ABI 1.8. */
SHOAL_API int shoal_send_many(shoal_ctx_t *ctx, shoal_pid_t to, uint32_t type, const void *data,
                              size_t size, size_t n, size_t *sent);

/* As shoal_send, into the receiver's system mailbox: handled before any
 * ordinary message, never refused as full (no limit), seen with
 * SHOAL_MSG_PRIORITY. For control traffic. */
SHOAL_API int shoal_send_priority(shoal_ctx_t *ctx, shoal_pid_t to, uint32_t type, const void *data,
                                  size_t size);

/* After a send to `to` was refused with SHOAL_EBUSY (or SHOAL_EFULL, or a
 * checkout pool's SHOAL_ENOMEMBERS: ABI 1.10): asks for one
 * SHOAL_MSG_ROOM from it when it has drained below its low-water mark (a
 * quarter of it free), so a producer waits instead of retrying. SHOAL_OK:
 * it will come (at once if there is room already; with status
 * SHOAL_ENOPROC if `to` ends first); SHOAL_ENOTSUP: `to` cannot tell (no
 * receiver of shoal's since ABI 1.10, when isolated pools learnt to), so
 * retry later; SHOAL_ENOPROC: no such actor;
 * SHOAL_ENOMEM; SHOAL_EOVERLOAD: the pool's max_waiting senders wait
 * already (shoal/pool.h), nothing was asked. While the runtime's
 * unbounded mailboxes hold max_queued messages (shoal/runtime.h: every send
 * into one is refused then, whatever room its receiver has), the ROOM of a
 * receiver with room of its own, or of a pool, comes when they have drained
 * below 9/10 of it (checked every 10 ms; from `to`, status SHOAL_OK; a `to`
 * that ended meanwhile answers the next send with SHOAL_ENOPROC). ABI 1.4
 * (pull pools); 1.5: bounded actors and forward pools too. */
SHOAL_API int shoal_notify_room(shoal_ctx_t *ctx, shoal_pid_t to);

/* Calls `to` asynchronously: sends a CALL and returns at once with *ref set.
 * Exactly one of these arrives later as a message carrying that ref: a
 * SHOAL_MSG_REPLY, or a SHOAL_MSG_TIMEOUT after timeout_ms. An error return
 * (as shoal_send) means nothing was sent and nothing will arrive. */
SHOAL_API int shoal_call(shoal_ctx_t *ctx, shoal_pid_t to, uint32_t type, const void *data,
                         size_t size, uint64_t timeout_ms, shoal_ref_t *ref);

/* As shoal_call, with high priority: the CALL goes to the receiver's
 * system mailbox, is never refused as full and is handled before queued
 * work. To a pool, it goes to the pool itself, never to a worker: this is
 * how pool commands (shoal/pool.h) are sent. */
SHOAL_API int shoal_call_priority(shoal_ctx_t *ctx, shoal_pid_t to, uint32_t type, const void *data,
                                  size_t size, uint64_t timeout_ms, shoal_ref_t *ref);

/* Inspects another actor asynchronously (shoal/inspect.h): exactly one
 * SHOAL_MSG_REPLY (data: the JSON object, NUL-terminated) or
 * SHOAL_MSG_TIMEOUT arrives later with *ref. The request goes through the
 * receiver's system mailbox: never refused as full. */
SHOAL_API int shoal_inspect(shoal_ctx_t *ctx, shoal_pid_t pid, uint64_t timeout_ms,
                            shoal_ref_t *ref);

/* Builds the immediate answer inside handle_call: copies `size` bytes. In a
 * pool with `isolation: process`, an answer over 524,240 bytes reaches
 * the caller as the status SHOAL_EINVAL instead (shoal_send). */
SHOAL_API int shoal_reply_set(shoal_reply_t *reply, uint32_t type, const void *data, size_t size);

/* Inside handle_call: answer with an error status instead (the caller sees a
 * REPLY with status = err). */
SHOAL_API void shoal_reply_error(shoal_reply_t *reply, int err);

/* Answers a call later (after handle_call returned SHOAL_DEFER): `to` and
 * `ref` are msg->from and msg->ref of that call. The reply goes straight to
 * the caller. SHOAL_ENOPROC if the caller is gone. */
SHOAL_API int shoal_reply(shoal_ctx_t *ctx, shoal_pid_t to, shoal_ref_t ref, uint32_t type,
                          const void *data, size_t size);

/* Sends a copy of the message to `to` after delay_ms, through the runtime's
 * timer. *timer (may be NULL) identifies it for shoal_cancel_timer. A
 * delivery refused at expiry (full, gone) is counted, not retried. */
SHOAL_API int shoal_send_after(shoal_ctx_t *ctx, shoal_pid_t to, uint64_t delay_ms, uint32_t type,
                               const void *data, size_t size, shoal_timer_t *timer);

/* As shoal_send_after, into the receiver's system mailbox: never refused
 * as full, seen with SHOAL_MSG_PRIORITY. For periodic ticks that must not be
 * lost exactly when the actor is overloaded. */
SHOAL_API int shoal_send_after_priority(shoal_ctx_t *ctx, shoal_pid_t to, uint64_t delay_ms,
                                        uint32_t type, const void *data, size_t size,
                                        shoal_timer_t *timer);

/* Cancels a timer that has not fired: SHOAL_OK, or SHOAL_ENOPROC when it
 * already fired or was cancelled. */
SHOAL_API int shoal_cancel_timer(shoal_ctx_t *ctx, shoal_timer_t timer);

/* Options for spawning. Zero-initialise, then set what you need. */
typedef struct shoal_spawn_opts_s {
    uint32_t mailbox_limit; /* 1 .. SHOAL_MAILBOX_MAX, or 0 / SHOAL_MAILBOX_UNBOUNDED */
} shoal_spawn_opts_t;

/* Spawns a child of the running actor, linked to it: the parent gets a
 * SHOAL_MSG_EXIT when the child ends, and the child is stopped when the
 * parent ends. `args` goes to the child's init (keep it alive until then).
 * opts may be NULL. */
SHOAL_API int shoal_spawn(shoal_ctx_t *ctx, const shoal_behaviour_t *behaviour, const void *args,
                          const shoal_spawn_opts_t *opts, shoal_pid_t *pid);

/* Ends the running actor once the current callback returns, with `reason`
 * (0 = normal). */
SHOAL_API void shoal_exit(shoal_ctx_t *ctx, int reason);

/* Ends the running actor's turn when the current callback returns: the
 * actor goes to the back of its worker's queue if it has messages left, so
 * every actor queued there runs first. For an actor that loops by sending
 * itself a message (a producer waiting for room): without it, that message
 * is handled in the same turn. */
SHOAL_API void shoal_yield(shoal_ctx_t *ctx);

/* Asks another actor to stop (reason SHOAL_ESHUTDOWN): it handles what it
 * is doing, runs terminate and ends. SHOAL_ENOPROC if it is gone. */
SHOAL_API int shoal_stop(shoal_ctx_t *ctx, shoal_pid_t pid);

/* Logs the message, then unwinds the running callback back to the
 * dispatcher: the actor ends with SHOAL_EPANIC. Does not return. Resources
 * the callback holds are not released. */
SHOAL_API SHOAL_NORETURN void shoal_panic(shoal_ctx_t *ctx, const char *fmt, ...)
    SHOAL_PRINTF(2, 3);

/* Log levels. */
enum { SHOAL_LOG_ERROR = 0, SHOAL_LOG_WARN = 1, SHOAL_LOG_INFO = 2, SHOAL_LOG_DEBUG = 3 };

/* Logs one line tagged with the running actor's PID and behaviour name;
 * a line is cut at about 1000 bytes. Written as text (shoald's text log,
 * the runtime's stderr) it stays one line whatever it holds: control
 * characters (a newline in a payload it quotes, an escape sequence) come
 * out as \n, \r, \t, \xNN or \u00NN; in shoald's JSON log, as JSON's
 * escapes. */
SHOAL_API void shoal_log(shoal_ctx_t *ctx, int level, const char *fmt, ...) SHOAL_PRINTF(3, 4);

#ifdef __cplusplus
}
#endif
#endif
