/* shoal/args.h - a pool's `args:` mapping, as a plugin reads it.
 *
 * init gets the args as a read-only tree (const shoal_args_t *, passed as
 * init's `args`). Plugins never see YAML: they ask for a key with a typed
 * getter, which checks the type and range and answers with a clear error.
 *
 *     int64_t rate = 100;            // the default, kept when the key is absent
 *     uint64_t every_ms;
 *     int rc;
 *     if ((rc = shoal_arg_int(ctx, args, "rate", SHOAL_ARG_OPTIONAL, 1, 1000000, &rate)) ||
 *         (rc = shoal_arg_duration_ms(ctx, args, "every", 0, &every_ms)))
 *         return rc;                 // the actor ends; the reason was logged
 *
 * Every getter: looks `key` up in the mapping `args` (key NULL: `args`
 * itself, e.g. a list item); on success stores the value in *out and returns
 * SHOAL_OK. A key that is absent is SHOAL_ENOKEY, unless flags has
 * SHOAL_ARG_OPTIONAL: then SHOAL_OK with *out untouched. A value of the wrong
 * type or out of range is SHOAL_EINVAL. On error the message (with the
 * config file, line and column of the value) is logged through ctx as the
 * running actor and is readable with shoal_ctx_error(ctx) until the next
 * getter call. ctx may be NULL (nothing logged). Strings returned point into
 * the tree, which lives as long as the pool that owns it. Any thread.
 */
#ifndef SHOAL_ARGS_H
#define SHOAL_ARGS_H

#include <stdbool.h>

#include "shoal/error.h"
#include "shoal/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shoal_args_s shoal_args_t;

#define SHOAL_ARG_OPTIONAL 0x1u

/* Any scalar, as written ("pong", "42"). */
SHOAL_API int shoal_arg_string(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                               unsigned flags, const char **out);
/* A plain integer (decimal, or 0x hex) within [min, max]. */
SHOAL_API int shoal_arg_int(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                            unsigned flags, int64_t min, int64_t max, int64_t *out);
/* true or false, unquoted; nothing else. */
SHOAL_API int shoal_arg_bool(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                             unsigned flags, bool *out);
/* An integer with a unit: us, ms, s, m, h ("250ms", "2s", "1m"); 0 may go
 * without one. Stored in milliseconds (us rounds up). */
SHOAL_API int shoal_arg_duration_ms(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                                    unsigned flags, uint64_t *out);
/* The same, in microseconds ("50us" stays 50; "2s" is 2000000). */
SHOAL_API int shoal_arg_duration_us(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                                    unsigned flags, uint64_t *out);
/* One of the strings in `choices` (NULL-terminated), unquoted or quoted;
 * *index is its position. Anything else is SHOAL_EINVAL, listing them. */
SHOAL_API int shoal_arg_enum(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                             unsigned flags, const char *const *choices, unsigned *index);
/* An integer of bytes, with an optional unit: B, KiB, MiB, GiB, TiB, or
 * kB, MB, GB, TB (powers of 1000). "64KiB" = 65536. */
SHOAL_API int shoal_arg_size(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                             unsigned flags, uint64_t *out);
/* A list, or a mapping: walk it with shoal_args_len / shoal_args_item. */
SHOAL_API int shoal_arg_list(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                             unsigned flags, const shoal_args_t **out);
SHOAL_API int shoal_arg_map(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                            unsigned flags, const shoal_args_t **out);

/* Items of a list or pairs of a mapping (0 for a scalar or NULL). */
SHOAL_API size_t shoal_args_len(const shoal_args_t *node);
/* Item i of a list, or value i of a mapping; NULL past the end. */
SHOAL_API const shoal_args_t *shoal_args_item(const shoal_args_t *node, size_t i);
/* Key i of a mapping; NULL otherwise. */
SHOAL_API const char *shoal_args_key(const shoal_args_t *node, size_t i);

/* For a check of the plugin's own (a range, a combination): reports the
 * message like a getter error, at the value of `key` in args (at args itself
 * when key is NULL or absent), and returns SHOAL_EINVAL. */
SHOAL_API int shoal_arg_error(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                              const char *fmt, ...) SHOAL_PRINTF(4, 5);

/* The last getter error seen in this callback ("" if none). */
SHOAL_API const char *shoal_ctx_error(const shoal_ctx_t *ctx);

#ifdef __cplusplus
}
#endif
#endif
