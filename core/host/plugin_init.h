/* plugin_init.h - a plugin's own init and fini (shoal_plugin_t), each run
 * under a deadline.
 *
 * The loader runs it on the thread that loads -- the host thread, at start
 * and at each reload that loads a new plugin. An init that never returns (a
 * database that never answers) would hold that thread for ever: no signal
 * read, no control request answered, a SIGKILL the only way out. So init
 * runs on a thread of its own (one for every hook, while none hangs) while
 * the loader waits for it at most SHOAL_PLUGIN_INIT_TIMEOUT_MS. Past that,
 * the load fails (the reload fails, nothing changes) and the init is
 * abandoned: a thread cannot be stopped inside plugin code. If it ever
 * returns, that thread undoes it (fini, when it succeeded), unloads the
 * plugin and closes its copy, and ends; the next hook runs on a new
 * thread.
 *
 * fini the same: it runs where the plugin's last reference goes (the host
 * thread at a reload or at exit, or a dispatcher thread), and one that
 * never returned held shoald at exit for good. Past the deadline the
 * plugin is left loaded; its thread closes it if fini ever returns.
 */
#ifndef SHOAL_HOST_PLUGIN_INIT_H
#define SHOAL_HOST_PLUGIN_INIT_H

#include <stdbool.h>
#include <stddef.h>

#include <shoal/plugin.h>

#define SHOAL_PLUGIN_INIT_TIMEOUT_MS 10000u

/* Runs d->init(why, why_size), or d->fini() when fini (d from dl, the
 * copy's handle; copy, its descriptor). Returns 0 with *result init's
 * return value (0 for fini), or SHOAL_ETIMEDOUT when the hook did not
 * return within timeout_ms: dl and copy are then its thread's (see above),
 * and why is left empty. Or SHOAL_ENOMEM / SHOAL_EFAILED (no thread): the
 * hook did not run. */
int shoal__plugin_hook_run(const shoal_plugin_t *d, bool fini, void *dl, int copy,
                           unsigned timeout_ms, char *why, size_t why_size, int *result);

/* The same, calling tend(tend_arg) (NULL: nothing) on the waiting thread
 * every SHOAL_ASK_EVERY_MS at most while it waits for the hook: the host thread waits
 * here up to timeout_ms, and shoald pets systemd's watchdog meanwhile
 * (loader.h, shoal__loader_set_tend). */
int shoal__plugin_hook_run_tended(const shoal_plugin_t *d, bool fini, void *dl, int copy,
                                  unsigned timeout_ms, void (*tend)(void *), void *tend_arg,
                                  char *why, size_t why_size, int *result);

#endif
