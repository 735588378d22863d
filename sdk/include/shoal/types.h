/* shoal/types.h - the handful of types every other SDK header uses.
 *
 * Plugins and embedders include only headers from sdk/include/shoal/. None of
 * them includes anything from core/, and no struct here changes layout with
 * build options.
 */
#ifndef SHOAL_TYPES_H
#define SHOAL_TYPES_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define SHOAL_API __attribute__((visibility("default")))
#define SHOAL_NORETURN __attribute__((noreturn))
#define SHOAL_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define SHOAL_API
#define SHOAL_NORETURN
#define SHOAL_PRINTF(fmt, args)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A process id: an opaque 64-bit value (slot and generation). 0 is never a
 * live actor. A PID stays safe to use after its actor ends: every operation
 * on it then returns SHOAL_ENOPROC. */
typedef uint64_t shoal_pid_t;
#define SHOAL_PID_NONE ((shoal_pid_t)0)

/* The reference of one call; a reply or a timeout carries it back. */
typedef uint64_t shoal_ref_t;

/* A timer started by shoal_send_after(); 0 is never a timer. */
typedef uint64_t shoal_timer_t;

typedef struct shoal_runtime_s shoal_runtime_t;   /* one per process */
typedef struct shoal_ctx_s shoal_ctx_t;           /* what a handler is given */
typedef struct shoal_reply_s shoal_reply_t;       /* a reply being built */
typedef struct shoal_inspect_s shoal_inspect_t;   /* an inspection being built */
typedef struct shoal_arg_spec_s shoal_arg_spec_t; /* one key of an args schema (args.h) */

/* Mailbox limit meaning "no limit". A bounded limit is 1 .. SHOAL_MAILBOX_MAX. */
#define SHOAL_MAILBOX_UNBOUNDED UINT32_MAX
#define SHOAL_MAILBOX_MAX (1u << 30)

#ifdef __cplusplus
}
#endif
#endif
