/* source.h - sources: the singleton actors a config declares under
 * `sources:` (a loadgen feeding a pool). Each is one actor registered
 * under its name, spawned after every pool and stopped before the pools
 * drain. Inside, it is kept in a record like a pool's of one worker (its
 * supervisor: restarts within its budget, then down and retried after
 * backoff), opened with count_sends so that the runtime counts what its
 * actor sends (actor.h, shoal_send_counts_t). It is never a pool where an
 * operator looks: not in the pool rows, the ledger or `inspect`; it has
 * its own rows in the table and its own lines in `shoalctl status`.
 *
 * Every function here runs on the host thread.
 */
#ifndef SHOAL_HOST_SOURCE_H
#define SHOAL_HOST_SOURCE_H

#include <stdbool.h>
#include <stdio.h>

#include "host/host.h"

/* Spawns every source of h->config (after the pools), registers each under
 * its name. On error err says which and why; what started is left to
 * shoal__host_destroy. */
int shoal__host_sources_start(shoal_host_t *h, shoal_diag_t *err);

/* Stops every source (producers first, before the pools drain) and waits
 * until each has ended or end_ns (shoal__now_ns) passed, as
 * shoal__host_wait_ended: how many had not, or -1 when interrupted. */
int shoal__host_sources_stop(shoal_host_t *h, uint64_t end_ns, bool (*interrupted)(void *),
                             void *arg);

/* Reload, all or nothing. prepare: starts each source of c that is new or
 * whose plugin, behaviour, args or restart policy changed (its init must
 * succeed), appended to h->sources from index *first_new, each held: its
 * actor ran init and handles nothing until the commit (pool.h: opts held),
 * so a reload that fails sent nothing from a new source; on failure err
 * says why and the caller undoes. undo: stops and forgets those. commit:
 * registers the new ones under their names and lets them send, stops the
 * removed and replaced ones, points the kept ones at c; what it did in
 * notes ("" for nothing), gen being the generation c becomes. plan: what a
 * reload to c would do, in notes. */
int shoal__host_sources_prepare(shoal_host_t *h, const shoal_config_t *c, uint64_t gen,
                                size_t *first_new, shoal_diag_t *err);
void shoal__host_sources_undo(shoal_host_t *h, size_t first_new);
void shoal__host_sources_commit(shoal_host_t *h, const shoal_config_t *c, uint64_t gen,
                                size_t first_new, char *notes, size_t size);
void shoal__host_sources_plan(shoal_host_t *h, const shoal_config_t *c, char *notes, size_t size);

/* Once a second: logs each restart of a source (with the running total),
 * a source down past its restart budget (once) and back up; forgets
 * stopped sources that have ended. */
void shoal__host_sources_watch(shoal_host_t *h);

/* The table's rows (source  state  sent/s  refused/s  restarts(total)),
 * rates since the previous call over `seconds`. */
void shoal__host_sources_table(shoal_host_t *h, FILE *out, double seconds);

/* The `shoalctl status` line of source i (of h->sources): "source
 * load-api running: sent 120000, refused 30, restarts 0\n" (the state:
 * running, down, stopping, ended, or starting while the reload that
 * started it has not committed). */
void shoal__host_source_status(shoal_host_t *h, size_t i, char *buf, size_t size);

/* How many sources run (not stopping, nor started by a reload that has
 * not committed). */
size_t shoal__host_sources_running(const shoal_host_t *h);

/* Drops the host's references on the sources' records (shoal__host_destroy,
 * before the runtime goes). */
void shoal__host_sources_free(shoal_host_t *h);

/* Whether a running source (or pool) can stay as b: the same code, args
 * and restart policy (reload.c). */
bool shoal__host_same_actor(const shoal_config_pool_t *a, const shoal_config_pool_t *b);

#endif
