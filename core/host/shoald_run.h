/* shoald_run.h - what shoald does with a config file it runs (shoald.c is
 * its command line; shoald_check.h what it does with one it does not
 * run): `shoald FILE` once its options are read.
 */
#ifndef SHOAL_HOST_SHOALD_RUN_H
#define SHOAL_HOST_SHOALD_RUN_H

#include <stdbool.h>
#include <stdint.h>

/* Runs the pools path declares until a signal, a stop (shoalctl stop) or
 * the end of run_for_ms (0: none), then drains them; table: a table
 * block every second on stdout; control_path (NULL: none) replaces the
 * config's runtime.control. Returns the exit status: 0 stopped after
 * draining, 2 a config or start error; 3 (pools still busy, or a handler
 * still in plugin code, after shutdown.drain, or a second stop signal)
 * ends the process at once instead of returning. */
int shoald_run(const char *path, uint64_t run_for_ms, bool table, const char *control_path);

#endif
