/* shoald_check.h - what shoald does with a config file without running it
 * (shoald.c is its command line, shoald_run.c the running host): load and
 * check it, describe the schema and the args its plugins take, ask a
 * running shoald what a reload from it would change. Each prints what it finds (stdout) or
 * the error (stderr, file:line:col) and returns the exit status.
 */
#ifndef SHOAL_HOST_SHOALD_CHECK_H
#define SHOAL_HOST_SHOALD_CHECK_H

#include "host/config.h"
#include "host/loader.h"

/* Load, validate, resolve: 0 with *c and *loader, or 2 (printed). stop
 * (NULL: never) is asked before each plugin is loaded (each may take its
 * trial and init, up to 10 s): when it names a stop that came (e.g.
 * "SIGTERM"), no more is, and 1 (printed: "shoald: SIGTERM while its
 * plugins loaded: stopped (FILE:L:C: plugins.db: not loaded: ...)"). */
int shoald_load(const char *path, const char *(*stop)(void *), void *arg, shoal_config_t **c,
                shoal_loader_t **loader);
/* --check: 0 valid (and *control, when control is not NULL, a copy of
 * FILE's runtime.control or NULL), else 2. */
int shoald_check(const char *path, char **control);
/* --help-config FILE: the schema, then the args of every behaviour of
 * FILE's plugins; 2 when FILE or a plugin cannot be read. */
int shoald_help_config(const char *path);
/* --check --diff: asks the shoald at socket_path (named by origin) for the
 * plan of a reload from path. */
int shoald_diff(const char *path, const char *socket_path, const char *origin);

#endif
