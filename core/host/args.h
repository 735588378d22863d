/* args.h - the checks behind shoal/args.h, with the error in a diag the
 * caller owns (used by the public getters, the config validator and tests). */
#ifndef SHOAL_HOST_ARGS_H
#define SHOAL_HOST_ARGS_H

#include <stdbool.h>

#include "host/diag.h"
#include "host/node.h"
#include "shoal/args.h"
#include "shoal/error.h"

int shoal__arg_string(const shoal_node_t *args, const char *key, unsigned flags, const char **out,
                      shoal_diag_t *err);
int shoal__arg_int(const shoal_node_t *args, const char *key, unsigned flags, int64_t min,
                   int64_t max, int64_t *out, shoal_diag_t *err);
int shoal__arg_bool(const shoal_node_t *args, const char *key, unsigned flags, bool *out,
                    shoal_diag_t *err);
int shoal__arg_duration_ms(const shoal_node_t *args, const char *key, unsigned flags, uint64_t *out,
                           shoal_diag_t *err);
int shoal__arg_duration_us(const shoal_node_t *args, const char *key, unsigned flags, uint64_t *out,
                           shoal_diag_t *err);
int shoal__arg_enum(const shoal_node_t *args, const char *key, unsigned flags,
                    const char *const *choices, unsigned *index, shoal_diag_t *err);
int shoal__arg_size(const shoal_node_t *args, const char *key, unsigned flags, uint64_t *out,
                    shoal_diag_t *err);
int shoal__arg_node(const shoal_node_t *args, const char *key, unsigned flags,
                    shoal_node_kind_t kind, const shoal_node_t **out, shoal_diag_t *err);

/* shoal_arg_error into err: "args 'key': <fmt>" at the value of key in args
 * (at args itself when key is NULL or absent). Returns SHOAL_EINVAL. */
int shoal__arg_error(shoal_diag_t *err, const shoal_node_t *args, const char *key, const char *fmt,
                     ...) SHOAL_PRINTF(4, 5);

/* What a getter's message says after its "args 'key': " or "args: " (msg
 * itself when it has neither). Points into msg. */
const char *shoal__arg_reason(const char *msg);

/* Rewrites a getter's message in err for a config, where the key has a full
 * path: "args 'rate': <reason>" becomes "<path>.<key>: <reason>" (the place
 * is kept). Returns rc, with SHOAL_ENOKEY turned into SHOAL_EINVAL: a key
 * that is missing is a config error like any other. */
int shoal__arg_relabel(shoal_diag_t *err, const char *path, const char *key, int rc);

#endif
