/* config.h - shoald's config file: parse (node.c), then validate against
 * the schema table (config.c) into a shoal_config_t, then resolve (load the
 * plugins, find the behaviours). Three steps; each error names
 * file:line:column and what was expected.
 *
 *   runtime:  { threads: auto | 1..1024, throughput: 1..1048576,
 *               spin: duration, max_actors: 16..2^30, control: path,
 *               stall_warn: duration, max_extra_threads: auto | 0..1024 }
 *   log:      { format: text | json, level: error | warn | info | debug }
 *   shutdown: { drain: duration }
 *   metrics:  { listen: HOST:PORT }            Prometheus GET /metrics
 *   plugins:  { NAME: path | name, ... }       paths relative to the file; a
 *             | [name, ...]                    name (no '/') is searched (plugin_path.h)
 *   pools:    { NAME: POOL, ... }
 *   POOL:     { worker: PLUGIN.BEHAVIOUR | POOL (nested), size, min, max,
 *               mailbox: 1.. | unbounded, args: {...}, restart: {max,
 *               within, backoff}, kind: forward | pull | checkout }
 *             a pull pool also: { prefetch, buffer, redeliver,
 *               dead_letter: POOL NAME, source: PLUGIN.BEHAVIOUR,
 *               source_args: {...} }          (config_pull.c)
 *             a checkout pool: { member: PLUGIN.BEHAVIOUR, init, max,
 *               add_member_retry, member_start_timeout, cull_interval,
 *               max_age, max_lifetime, max_lifetime_jitter, queue_max,
 *               lease, group }                 (config_checkout.c)
 *   sources:  { NAME: SOURCE, ... }             names distinct from pools'
 *   SOURCE:   { actor: PLUGIN.BEHAVIOUR, args: {...}, restart: {...} }
 *
 * `shoald --help-config` prints the table (shoal__config_help).
 */
#ifndef SHOAL_HOST_CONFIG_H
#define SHOAL_HOST_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "host/diag.h"
#include "host/loader.h"
#include "host/name_index.h"
#include "host/node.h"
#include "host/schema.h"
#include "shoal/pool.h"

enum { SHOAL_LOG_FORMAT_TEXT = 0, SHOAL_LOG_FORMAT_JSON = 1 };
/* A pool's workers run in shoald's process, or in a child process of its
 * own (host/isolated.c). */
enum { SHOAL_ISOLATION_NONE = 0, SHOAL_ISOLATION_PROCESS = 1 };

/* The most redeliveries a pull pool's config may ask for (the SDK sets no
 * bound: past this a config is more likely a typo than a policy). */
#define SHOAL_CONFIG_MAX_REDELIVER 1000u

/* An `auto` count (SHOAL_KEY_AUTO_U32). */
#define SHOAL_CONFIG_AUTO UINT32_MAX

typedef struct shoal_config_pool_s {
    char *name;             /* "api"; a nested pool: "api/worker" */
    char *path;             /* where it is in the file, for messages: "pools.api.worker" */
    const shoal_node_t *at; /* the pool's mapping */
    const shoal_node_t *worker_at;
    char *plugin, *behaviour;                   /* worker: PLUGIN.BEHAVIOUR, or both NULL ... */
    struct shoal_config_pool_s *nested;         /* ... and this: a pool of pools */
    uint32_t size, min_size, max_size, mailbox; /* mailbox: SHOAL_MAILBOX_UNBOUNDED or 1.. */
    bool size_given; /* the file writes size: (else it is a default, or autoscale.min) */
    shoal_pool_restart_t restart;
    uint64_t warn_queue;      /* log when more are in flight; 0 = never */
    int isolation;            /* SHOAL_ISOLATION_*: top-level pools only */
    bool source;              /* under sources: (a singleton actor, not a pool; source.h) */
    const shoal_node_t *args; /* the `args:` mapping, or NULL */
    /* resolve */
    shoal_module_t *module; /* a reference, dropped by shoal__config_free */
    const shoal_behaviour_t *beh;
    /* kind: pull (config_pull.c): top-level pools only, never nested,
     * never isolated; a forward pool refuses every key below */
    int kind;                  /* SHOAL_POOL_KIND_* (the enum key's index) */
    int strategy;              /* SHOAL_POOL_STRATEGY_* (the enum key's index): forward only */
    uint32_t prefetch, buffer; /* live on reload (SHOAL_POOL_SET_PREFETCH, _BUFFER) */
    uint32_t redeliver;        /* a change replaces the pool */
    char *dead_letter;         /* another top-level pool's name, or NULL */
    const shoal_node_t *dead_letter_at;
    char *src_plugin, *src_behaviour; /* source: PLUGIN.BEHAVIOUR, or both NULL */
    const shoal_node_t *src_at;       /* the source: value */
    const shoal_node_t *src_args;     /* the `source_args:` mapping, or NULL */
    shoal_module_t *src_module;       /* resolve: a reference */
    const shoal_behaviour_t *src_beh;
    /* elastic pools (config_elastic.c): a pool under pools: whose workers
     * are actors, not isolated; applied live by a reload (SET_ELASTIC) */
    uint64_t idle_timeout_ms;         /* 0: never */
    uint32_t max_waiting;             /* 0: no bound */
    shoal_pool_autoscale_t autoscale; /* when 0: off */
    uint32_t as_min, as_max;          /* autoscale.min and max as written (the pool's bounds) */
    const shoal_node_t *up_when_at, *down_when_at; /* autoscale.up.when, down.when */
    /* kind: checkout (config_checkout.c): members (worker_at, plugin,
     * behaviour: from `member:`), init is size, max max_size; applied live
     * by a reload (SHOAL_POOL_SET_CHECKOUT) but for the group. */
    shoal_pool_checkout_t checkout; /* checkout.group points at co_group */
    char *co_group;
} shoal_config_pool_t;

/* A pull pool fed by its own source: it is asked for no more items than
 * there is room for, so it refuses nothing (pool.h: shoal__pool_stays_empty). */
static inline bool shoal__config_pool_fed(const shoal_config_pool_t *p)
{
    return p->kind == SHOAL_POOL_KIND_PULL && p->src_plugin != NULL;
}

typedef struct shoal_config_plugin_s {
    char *name;
    char *path;        /* resolved against the config's directory; NULL for a name until resolve */
    char *file;        /* a name's file ("echo.so"), searched on the plugin path (plugin_path.h) */
    const char *found; /* where path came from (SHOAL_FOUND_*), once resolved */
    char *shown;       /* NULL, or the name path is shown as (shoal__config_isolate) */
    const shoal_node_t *at;
    shoal_module_t *module; /* resolve: a reference */
} shoal_config_plugin_t;

typedef struct shoal_config_s {
    char *file; /* as given */
    char *text; /* the file's text, as parsed (an isolated pool's child parses it again) */
    size_t text_len;
    char *dir; /* its directory: relative paths resolve here */
    shoal_node_t *root;
    struct {
        uint32_t threads; /* 0 = auto */
        uint32_t throughput;
        uint32_t spin_us;
        uint32_t max_actors; /* 0 = the runtime's default */
        char *control;       /* resolved path, or NULL */
        uint64_t max_queued; /* in unbounded mailboxes together; 0 = no limit */
        uint64_t stall_warn_ms;
        uint32_t max_extra_threads;      /* SHOAL_CONFIG_AUTO: as many as threads; 0: none */
        const shoal_node_t *plugin_path; /* a list of directories (plugin_path.h), or NULL */
    } runtime;
    struct {
        int format; /* SHOAL_LOG_FORMAT_* */
        int level;  /* SHOAL_LOG_* */
    } log;
    struct {
        uint64_t drain_ms;
    } shutdown;
    struct {
        struct shoal_listen_s *listen; /* GET /metrics served here; NULL: no HTTP server */
        const shoal_node_t *listen_at;
    } metrics;
    shoal_config_plugin_t *plugins;
    size_t nplugins;
    shoal_config_pool_t *pools;
    size_t npools;
    /* pools by name (shoal__config_pool): indexed whenever pools change
     * (the parse, shoal__config_isolate); not ready (no memory): scanned */
    shoal_name_index_t pool_names;
    /* the pools' indexes in the order they start: every dead_letter target
     * before the pools that name it (config_pull.c) */
    size_t *order;
    /* sources: singleton actors (host/source.h), each kept in a record like a
     * pool's of one worker: size 1, mailbox 64, source set, no nesting */
    shoal_config_pool_t *sources;
    size_t nsources;
} shoal_config_t;

/* Parses and validates the file at path (no plugin is loaded). On error:
 * SHOAL_EINVAL (or SHOAL_ENOMEM, SHOAL_ELOAD for an unreadable file) and err
 * says where and why; *out is NULL. */
int shoal__config_load(const char *path, shoal_config_t **out, shoal_diag_t *err);
/* The same reading the file once, never waiting for it to settle (file.h:
 * one that changed while read is refused): what a diff, on the host thread
 * at any client's word, reads. */
int shoal__config_load_once(const char *path, shoal_config_t **out, shoal_diag_t *err);
/* The same from text in memory; `file` names it in messages and is what
 * relative paths resolve against. */
int shoal__config_parse(const char *file, const char *text, size_t len, shoal_config_t **out,
                        shoal_diag_t *err);

/* Loads every plugin the config names, finds every pool's behaviour and
 * checks each leaf pool's args against that behaviour's schema, if it has
 * one (argcheck.h): SHOAL_ELOAD with err at the plugin's path (missing,
 * refused: the loader's reason) or at the worker (unknown plugin or
 * behaviour); SHOAL_EINVAL with err at the arg (unknown key, bad value,
 * missing required key). */
int shoal__config_resolve(shoal_config_t *c, shoal_loader_t *loader, shoal_diag_t *err);
/* The same, asking stop(arg) before each plugin it loads: when it says
 * true (shoald stops), no more plugin is loaded -- each may take its
 * trial and init, up to 10 s -- and SHOAL_ESHUTDOWN, err at the first
 * plugin not loaded. */
int shoal__config_resolve_until(shoal_config_t *c, shoal_loader_t *loader, bool (*stop)(void *),
                                void *arg, shoal_diag_t *err);

/* Frees c and drops its module references. NULL is fine. */
void shoal__config_free(shoal_config_t *c);

/* The plugin called name, or NULL. */
const shoal_config_plugin_t *shoal__config_plugin(const shoal_config_t *c, const char *name);

/* In an isolated pool's child process: keeps only the pool called name
 * (no longer isolated: it is the child's own), only the plugin it uses, at
 * plugin_path instead, and no control socket. SHOAL_OK, or SHOAL_EINVAL
 * with err when there is no such pool. Before resolve. */
int shoal__config_isolate(shoal_config_t *c, const char *name, const char *plugin_path,
                          shoal_diag_t *err);

/* p resolved against dir (the config file's directory, "" for the current
 * one), malloc'd, or NULL. A relative result always has a slash ("./x.so",
 * never "x.so"): dlopen searches the library path for a name without one. */
char *shoal__config_path(const char *dir, const char *p);

/* The source called name, or NULL. */
const shoal_config_pool_t *shoal__config_source(const shoal_config_t *c, const char *name);

/* ---- between config.c and config_load.c ---- */

/* Checks the whole tree root (its top-level sections, pools and sources)
 * into c: SHOAL_OK, or an error with err at its place. */
int shoal__config_check_top(shoal_config_t *c, const shoal_node_t *root, shoal_diag_t *err);

/* ---- between config.c and config_source.c ---- */

/* Checks map against schema s, filling base (as for a pool): its keys'
 * errors in err. */
int shoal__config_check_map(shoal_config_t *c, shoal_diag_t *err, const shoal_schema_t *s,
                            const shoal_node_t *map, const char *path, void *base);
/* Checks the `sources:` section of root (after pools:) into c->sources. */
int shoal__config_check_sources(shoal_config_t *c, const shoal_node_t *root, shoal_diag_t *err);

/* A pool's or a source's name: 1 to 63 letters, digits, '_', '-', '.'
 * (what a log line, a table row, a shoalctl word and a metrics label carry
 * as they are). Whether name is one; shown gets it as it can be printed
 * (anything unprintable as '?'). */
#define SHOAL_CONFIG_NAME_RULE "1 to 63 letters, digits, '_', '-' or '.'"
bool shoal__config_name_ok(const char *name, char *shown, size_t size);

/* The pool called name (top level), or NULL. */
const shoal_config_pool_t *shoal__config_pool(const shoal_config_t *c, const char *name);
/* Indexes c's pools by name for shoal__config_pool: whatever changes
 * c->pools calls it after (the parse, shoal__config_isolate); without
 * memory for it, lookups scan. */
void shoal__config_index_pools(shoal_config_t *c);

/* ---- between config.c and config_pull.c ---- */

/* PLUGIN.BEHAVIOUR: both parts [A-Za-z0-9_-]+, one dot. Whether text is
 * one; *plugin and *beh get malloc'd copies of the parts (both NULL on
 * ENOMEM: check them). */
bool shoal__config_split_behaviour(const char *text, char **plugin, char **beh);
/* The pull keys' values (schema types SHOAL_KEY_SOURCE, _SOURCE_ARGS,
 * _POOL_REF) into p, at path ("pools.jobs"). */
int shoal__config_pull_key(shoal_config_t *c, shoal_diag_t *err, const shoal_schema_key_t *k,
                           const shoal_node_t *val, const char *path, shoal_config_pool_t *p);
/* After a pool's keys: the keys of one kind refused on the other, each at
 * its own position; a pull pool nested, nesting, or isolated refused.
 * depth 0: under pools:. */
int shoal__config_pull_check(shoal_config_t *c, shoal_diag_t *err, const shoal_node_t *map,
                             const char *path, shoal_config_pool_t *p, unsigned depth);
/* After every pool and source: each dead_letter names another top-level
 * pool (not a source, not itself, no cycle), and c->order is filled. */
int shoal__config_pull_links(shoal_config_t *c, shoal_diag_t *err);
/* One line saying what a pull pool is (shoald --check):
 * "pool jobs: pull, 4 workers, prefetch 2, buffer 1024, redeliver 3,
 *  dead_letter failed, source burn.burn". */
void shoal__config_pull_describe(const shoal_config_pool_t *p, char *buf, size_t size);

/* ---- between config.c and config_checkout.c ---- */

/* A checkout pool's group (schema type SHOAL_KEY_GROUP) into p. */
int shoal__config_checkout_key(shoal_config_t *c, shoal_diag_t *err, const shoal_schema_key_t *k,
                               const shoal_node_t *val, const char *path, shoal_config_pool_t *p);
/* After a pool's keys: a checkout pool's rules (member, not worker; init,
 * not size; max defaults to init; none of the other kinds' keys; not
 * nested, not isolated), its bounds checked -- or, for another kind, the
 * first checkout-only key refused. */
int shoal__config_checkout_check(shoal_config_t *c, shoal_diag_t *err, const shoal_node_t *map,
                                 const char *path, shoal_config_pool_t *p, unsigned depth);
/* One line saying what a checkout pool is (shoald --check). */
void shoal__config_checkout_describe(const shoal_config_pool_t *p, char *buf, size_t size);

/* ---- between config.c and config_elastic.c ---- */

/* After a pool's keys (before its size is checked against its bounds):
 * idle_timeout, max_waiting and autoscale refused where they do not apply
 * (a nested pool, a pool of pools, an isolated one), autoscale's `when`
 * conditions parsed and checked, its min and max made the pool's bounds
 * (given once: there or as min/max), and the start size, if not given,
 * set to its min. */
int shoal__config_elastic_check(shoal_config_t *c, shoal_diag_t *err, const shoal_node_t *map,
                                const char *path, shoal_config_pool_t *p, unsigned depth);
/* What autoscale is, for --check and a reload's line: "busy > 80%,
 * refused > 0/s for 1s, +1; down: busy < 40%, refused <= 0/s idle 30s,
 * -1; cooldown 5s". */
void shoal__config_autoscale_text(const shoal_pool_autoscale_t *a, char *buf, size_t size);

/* Prints the schema: every key with its type, default, bounds and doc. */
void shoal__config_help(FILE *out);

#endif
