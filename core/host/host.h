/* host.h - what shoald runs: a runtime built from a config, its pools
 * started and registered under their names, log lines in the config's
 * format, and the drain at the end.
 *
 * Every log line carries the config generation (1 for the file shoald
 * started with).
 */
#ifndef SHOAL_HOST_HOST_H
#define SHOAL_HOST_HOST_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "host/config.h"
#include "pool/pool.h"

/* A config generation, kept while a pool started from it lives: the pool's
 * workers read their args from its node tree. */
typedef struct shoal_host_gen_s {
    shoal_config_t *config;
    uint64_t generation;
    unsigned refs; /* pools started from it, plus one while it is the current one */
    struct shoal_host_gen_s *next;
} shoal_host_gen_t;

typedef struct shoal_host_pool_s {
    char *name;
    shoal_pid_t pid;
    shoal_host_gen_t *from;        /* the generation its workers' args come from */
    shoal_host_gen_t *prev;        /* after a swap: the one its retiring workers used */
    const shoal_config_pool_t *cp; /* its entry there */
    shoal_pool_stats_t last;       /* for rates in the table */
    bool draining;                 /* removed or replaced: draining, then forgotten */
    bool ended;
} shoal_host_pool_t;

typedef struct shoal_host_s {
    shoal_runtime_t *rt;
    shoal_loader_t *loader;
    shoal_config_t *config; /* the current generation's */
    shoal_host_gen_t *gens;
    uint64_t generation;
    uint64_t reloads, reloads_failed;
    shoal_host_pool_t *pools;
    size_t npools, pools_cap;
    /* log sink: stderr, text or JSON lines */
    FILE *log_out;
    int log_format;
    pthread_mutex_t log_lock;
} shoal_host_t;

/* Builds the runtime from c (taking c, resolved against loader), spawns
 * every pool and registers it under its name. On error nothing is left
 * running, c is freed, and err says why. */
int shoal__host_start(shoal_config_t *c, shoal_loader_t *loader, FILE *log_out, shoal_host_t **out,
                      shoal_diag_t *err);

/* Reloads from path (SIGHUP): parse, validate and resolve the whole file,
 * start every new or changed pool, and only then change the running ones:
 * sizes and mailbox limits applied live, removed pools unregistered and
 * drained, a pool whose worker, args or bounds changed replaced by a new
 * one under its name (the old one drains). Any failure before that point
 * changes nothing: it is logged with its location and counted. One log
 * line says what changed. Returns SHOAL_OK or the failure; then *why (if
 * not NULL) says what failed, with its file:line:col when known (the
 * control socket's reply). */
int shoal__host_reload(shoal_host_t *h, const char *path, shoal_diag_t *why);

/* The ledger over every pool the host runs or drains, in one line:
 * accepted = handled + failed + dropped + in flight (and what is queued),
 * and how many were refused. In the reload log line and shoalctl status. */
void shoal__host_ledger(shoal_host_t *h, char *buf, size_t size);

/* What a reload to c (loaded and resolved) would change, without changing
 * anything: one line (shoald --check --diff). */
void shoal__host_plan(shoal_host_t *h, const shoal_config_t *c, char *buf, size_t size);

/* Forgets pools that have finished draining (and generations no pool uses
 * any more). Called once a second by shoald. */
void shoal__host_tidy(shoal_host_t *h);

/* Asks every pool to drain and waits until all have ended or deadline_ms
 * passed; logs each pool still busy then. Returns how many were. */
unsigned shoal__host_drain(shoal_host_t *h, uint64_t deadline_ms);

/* Stops what is left, joins every thread, frees everything. */
void shoal__host_destroy(shoal_host_t *h);

/* A log line from the host itself (pid none). */
void shoal__host_log(shoal_host_t *h, int level, const char *fmt, ...) SHOAL_PRINTF(3, 4);

/* One table row per pool (rate since the previous call, queue depth,
 * refused, restarts, queue-wait p50/p99); a header first if asked. */
void shoal__host_table(shoal_host_t *h, FILE *out, double seconds, bool header);

/* ---- between host.c and reload.c ---- */

/* Spawns the pool cp describes (its nested chain, its plugin held by each
 * worker); waits until every level has started. */
int shoal__host_start_pool(shoal_host_t *h, const shoal_config_pool_t *cp, shoal_pid_t *pid);
/* The spec chain of cp: specs[0] the pool, each nested level the next;
 * *leaf: the level whose workers run the plugin behaviour. */
void shoal__host_spec_chain(const shoal_config_pool_t *cp, shoal_pool_spec_t *specs,
                            const shoal_config_pool_t **leaf);
/* What keeps module m mapped while a worker runs its code. */
shoal_pool_hold_t shoal__host_hold(shoal_module_t *m);
/* A new current generation for c (one reference: being current). */
shoal_host_gen_t *shoal__host_gen_new(shoal_host_t *h, shoal_config_t *c);
/* Drops a reference; the last frees the generation and its config. */
void shoal__host_gen_unref(shoal_host_t *h, shoal_host_gen_t *g);
/* Tracks a pool started from cp (generation `from` gains a reference). */
shoal_host_pool_t *shoal__host_pool_add(shoal_host_t *h, const shoal_config_pool_t *cp,
                                        shoal_host_gen_t *from, shoal_pid_t pid);
/* "unbounded" or the number. */
void shoal__host_mailbox_text(uint32_t mailbox, char buf[24]);

#endif
