/* schema.h - the config's schema (schema.c): one table per section gives
 * each key's type, bounds, default, where it is stored and a one-line doc
 * (after nginx's ngx_command_t). config.c checks the YAML against the
 * tables; shoal__config_help prints them.
 */
#ifndef SHOAL_HOST_SCHEMA_H
#define SHOAL_HOST_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    SHOAL_KEY_U32,         /* integer in [min, max] */
    SHOAL_KEY_THREADS,     /* `auto` (0) or integer in [min, max] */
    SHOAL_KEY_AUTO_U32,    /* `auto` (SHOAL_CONFIG_AUTO) or integer in [min, max], 0 allowed */
    SHOAL_KEY_DURATION,    /* duration, stored in ms (uint64) */
    SHOAL_KEY_TIMEOUT,     /* `never` (0) or a duration of at least min ms, stored in ms */
    SHOAL_KEY_SPIN,        /* duration, stored in us (uint32), at most max us */
    SHOAL_KEY_ENUM,        /* one of choices, stored as its index in an int */
    SHOAL_KEY_PATH,        /* string, resolved against the config's directory */
    SHOAL_KEY_MAILBOX,     /* integer >= 1 or `unbounded` */
    SHOAL_KEY_SECTION,     /* a mapping checked against sub */
    SHOAL_KEY_PLUGINS,     /* NAME: path, ... */
    SHOAL_KEY_POOLS,       /* NAME: pool, ... */
    SHOAL_KEY_WORKER,      /* PLUGIN.BEHAVIOUR, or a pool mapping (nested) */
    SHOAL_KEY_ARGS,        /* any mapping, handed to the worker's init */
    SHOAL_KEY_LIMIT,       /* `off` (0) or integer in [min, max], stored as uint64 */
    SHOAL_KEY_DIRS,        /* a list of directories (or one): the node, kept as is */
    SHOAL_KEY_LISTEN,      /* HOST:PORT (listen.h), stored as a shoal_listen_t * (NULL: absent) */
    SHOAL_KEY_SOURCES,     /* NAME: source, ... */
    SHOAL_KEY_ACTOR,       /* PLUGIN.BEHAVIOUR (a source's) */
    SHOAL_KEY_SOURCE,      /* PLUGIN.BEHAVIOUR (a pull pool's source, config_pull.c) */
    SHOAL_KEY_SOURCE_ARGS, /* any mapping, handed to the source's init */
    SHOAL_KEY_POOL_REF,    /* the name of another top-level pool (a pull pool's dead_letter) */
    SHOAL_KEY_WHEN,        /* autoscale conditions: one or a list; the node, kept as is */
    SHOAL_KEY_MEMBER,      /* PLUGIN.BEHAVIOUR (a checkout pool's members) */
    SHOAL_KEY_GROUP,       /* a name (a checkout pool's group, config_checkout.c) */
} shoal_key_type_t;

typedef struct shoal_schema_s shoal_schema_t;

typedef struct shoal_schema_key_s {
    const char *key;
    shoal_key_type_t type;
    size_t offset; /* into the struct the section fills */
    int64_t min, max;
    const char *const *choices;
    const shoal_schema_t *sub;
    const char *def; /* for --help-config; the code sets the same default */
    const char *doc;
} shoal_schema_key_t;

struct shoal_schema_s {
    const char *name;
    const shoal_schema_key_t *keys;
    size_t nkeys;
};

/* The top level, and the mapping of one pool (under pools:). */
extern const shoal_schema_t shoal__schema_top;
extern const shoal_schema_t shoal__schema_pool;
/* The mapping of one source (under sources:). */
extern const shoal_schema_t shoal__schema_source;

#endif
