/* argcheck.h - behaviours' args schemas (shoal/args.h, ABI 1.3): is a
 * schema well formed (the loader asks, for every behaviour it loads), do a
 * pool's args match it (the config asks, when it resolves a leaf pool), and
 * what does it say (shoal-plugin-check --describe, shoald --help-config
 * FILE print it).
 */
#ifndef SHOAL_HOST_ARGCHECK_H
#define SHOAL_HOST_ARGCHECK_H

#include <stddef.h>
#include <stdio.h>

#include "host/diag.h"
#include "host/loader.h"
#include "host/node.h"
#include "shoal/args.h"

/* The most keys one schema may list (a longer array is refused: its
 * terminator is probably missing). */
#define SHOAL_ARGCHECK_MAX_KEYS 256

/* Checks the schema `specs` of the behaviour named `owner` ("plugin.beh"):
 * every key an identifier and unique, a known type and flags, choices for
 * an enum only (non-empty, unique), a range for int, duration and size only
 * (min <= max, min >= 0 for durations and sizes), no default on a required
 * key, a default valid for its type and range, a doc of one line. Returns
 * SHOAL_OK, or SHOAL_EINVAL with the reason in why ("behaviour 'p.b' arg
 * 'rate': ..."), NUL-terminated. specs NULL is fine (no schema). Any
 * thread; reads only specs. */
int shoal__argcheck_schema(const char *owner, const shoal_arg_spec_t *specs, char *why,
                           size_t why_size);

/* Checks a leaf pool's args against its behaviour's schema: every key must
 * be in the schema, every value of its type, range and choices, every
 * required key present. path names the pool in messages ("pools.api";
 * NULL: the args stand alone, named "args", as shoal-plugin-check's),
 * worker its behaviour as the config wrote it ("echo.echo"); args is the
 * pool's `args:` mapping or NULL when it has none, pool_at the pool's
 * mapping (where a missing key is reported when there is no args:).
 * Returns SHOAL_OK (also when specs is NULL: nothing to check), or
 * SHOAL_EINVAL with err at the offending key or value:
 *   "pools.api.args: unknown key 'rpely' for echo.echo (it takes: reply)"
 *   "pools.api.args.rate: 0 is out of range: expected 1 to 100"
 *   "pools.load.args: missing required key 'target' for loadgen.loadgen"
 * The value messages are the getters' (host/args.h), so they read as init's
 * would have. Any thread. */
int shoal__argcheck_args(const shoal_arg_spec_t *specs, const shoal_node_t *args,
                         const shoal_node_t *pool_at, const char *path, const char *worker,
                         shoal_diag_t *err);

/* The same, the args named `at` in messages as they are ("pools.jobs.
 * source_args" for a pull pool's source's). */
int shoal__argcheck_args_at(const shoal_arg_spec_t *specs, const shoal_node_t *args,
                            const shoal_node_t *pool_at, const char *at, const char *worker,
                            shoal_diag_t *err);

/* Prints what module m is and what args each of its behaviours takes, one
 * aligned row per key (key, type, required or default, range or choices,
 * doc):
 *
 *   plugin crash 1.0.0 (ABI 1.3) from /usr/lib/shoal/plugins/crash.so
 *     crash.crash
 *       every  integer  default 10     >= 1                 fail on every k-th ...
 *       mode   enum     default panic  panic | fail | exit  how it fails ...
 *
 * A behaviour without a schema says "(args not declared: not checked)", one
 * with an empty schema "(takes no args)". `as` is the name the behaviours
 * go by in a config (its key under plugins:), or NULL for the plugin's own
 * name. The module must stay loaded during the call. */
void shoal__argcheck_describe(FILE *out, const shoal_module_t *m, const char *as);

#endif
