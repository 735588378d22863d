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

/* ---- a behaviour's args schema (ABI 1.3) ----------------------------------
 *
 * A behaviour may declare the args it takes (shoal_behaviour_t.args): an
 * array of specs ended by one whose key is NULL. The host then checks a
 * pool's `args:` against it whenever it reads a config - `shoald --check`,
 * start, every reload - before any worker starts: a key the schema does not
 * list, a value of the wrong type, out of range or not among the choices,
 * and a required key that is absent are config errors with file:line:col,
 * and a reload with one is refused as a whole (the running generation
 * stays). `shoald --help-config FILE` and `shoal-plugin-check --describe
 * PLUGIN.so` print the schema. Without one (args NULL, or a plugin built for
 * ABI 1.0-1.2) args are passed on unchecked, as before.
 *
 * The schema checks; it does not fill in. init still reads every key with
 * the getters above and keeps its own default when the key is absent, so a
 * schema must say what init reads: the same keys, types, ranges and
 * choices, and as `def` the default init applies.
 *
 *     static const char *const modes[] = {"panic", "fail", "exit", NULL};
 *     static const shoal_arg_spec_t crash_args[] = {
 *         {.key = "every", .type = SHOAL_ARG_INT, .min = 1, .max = INT64_MAX, .def = "10",
 *          .doc = "fail on every k-th message or call"},
 *         {.key = "mode", .type = SHOAL_ARG_ENUM, .choices = modes, .def = "panic",
 *          .doc = "how it fails"},
 *         {.key = NULL},
 *     };
 *     static const shoal_behaviour_t crash = {..., .args = crash_args};
 *
 * The loader refuses a plugin whose schema is malformed (see the fields
 * below), naming the plugin, the behaviour and the key.
 */

/* What a value must be. Each type is checked exactly as its getter checks
 * it, so the config error reads as init's would have. */
typedef enum {
    SHOAL_ARG_STRING = 1,      /* any scalar: shoal_arg_string */
    SHOAL_ARG_INT = 2,         /* shoal_arg_int, within the range if there is one */
    SHOAL_ARG_BOOL = 3,        /* true or false: shoal_arg_bool */
    SHOAL_ARG_DURATION = 4,    /* shoal_arg_duration_ms; a range is in milliseconds */
    SHOAL_ARG_SIZE = 5,        /* shoal_arg_size; a range is in bytes */
    SHOAL_ARG_ENUM = 6,        /* one of `choices`: shoal_arg_enum */
    SHOAL_ARG_LIST = 7,        /* any list: shoal_arg_list (items are not checked) */
    SHOAL_ARG_MAP = 8,         /* any mapping: shoal_arg_map (keys are not checked) */
    SHOAL_ARG_DURATION_US = 9, /* shoal_arg_duration_us; a range is in microseconds */
} shoal_arg_type_t;

/* Spec flag: the key must be present (a required key has no `def`). A
 * different bit from SHOAL_ARG_OPTIONAL, which is a getter flag. */
#define SHOAL_ARG_REQUIRED 0x2u

/* One key of a schema. Every field but key and type may be left zero.
 *
 *   key      the key under args:, an identifier ([A-Za-z_][A-Za-z0-9_]*, at
 *            most 64), unique in the schema; NULL ends the array
 *   type     a shoal_arg_type_t
 *   flags    0 or SHOAL_ARG_REQUIRED
 *   min,max  the range, inclusive, for INT, DURATION (ms), DURATION_US (us)
 *            and SIZE (bytes), and a STRING's length in bytes (ABI 1.11):
 *            checked unless both are 0 (0, 0 = any value the type takes).
 *            Needs min <= max, and min >= 0 but for INT; other types must
 *            leave both 0. A DURATION
 *            is compared as its getter returns it, rounded up to whole ms
 *            ("1500us" is 2ms): declare DURATION_US for a key init reads
 *            with shoal_arg_duration_us.
 *   choices  ENUM only, and required there: the NULL-terminated list of
 *            allowed strings, each non-empty and unique
 *   def      the default as written in YAML ("10", "250ms", "8B", "[]"), or
 *            NULL for none: shown by --describe and --help-config, checked
 *            against the type and range when the plugin loads, never applied
 *            by the host (init applies its own)
 *   doc      one line (no newline) saying what the key does, or NULL
 */
struct shoal_arg_spec_s {
    const char *key;
    uint32_t type;
    uint32_t flags;
    int64_t min, max;
    const char *const *choices;
    const char *def;
    const char *doc;
};

#ifdef __cplusplus
}
#endif
#endif
