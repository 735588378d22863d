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

#endif
