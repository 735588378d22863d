/* config.c - the config tree checked against the schema tables (schema.h)
 * into a shoal_config_t. Reading the file and parsing it is
 * config_load.c's; what is then done with it (its plugins loaded, freeing
 * it, a child's view) is config_resolve.c's.
 */
#include "host/config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "host/args.h"
#include "host/file.h"
#include "host/plugin_path.h"
#include "host/listen.h"
#include "host/schema.h"
#include "shoal/ctx.h"

/* ---- errors -------------------------------------------------------------- */

/* "a, b, c" of a schema's keys. */
static void key_list(const shoal_schema_t *s, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < s->nkeys && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", s->keys[i].key);
}

/* ---- building ------------------------------------------------------------ */

static char *dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

/* config.h */
char *shoal__config_path(const char *dir, const char *p)
{
    if (p[0] == '/' || (dir[0] == '\0' && (strncmp(p, "./", 2) == 0 || strncmp(p, "../", 3) == 0)))
        return dup(p);
    if (dir[0] == '\0')
        dir = ".";
    size_t n = strlen(dir) + strlen(p) + 2;
    char *d = malloc(n);
    if (d != NULL)
        snprintf(d, n, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", p);
    return d;
}

static void pool_defaults(shoal_config_pool_t *p)
{
    p->size = 4;
    p->min_size = 1;
    p->max_size = 0; /* max(size, 1024) once size is known */
    p->mailbox = 64;
    p->restart = (shoal_pool_restart_t){.max = 5, .within_ms = 5000, .backoff_ms = 100};
    p->warn_queue = 100000;
    p->kind = SHOAL_POOL_KIND_FORWARD;
    p->prefetch = 1;
    p->buffer = 1024;
    shoal_pool_spec_t d; /* autoscale's and checkout's defaults are the SDK's */
    shoal_pool_spec_init(&d);
    p->autoscale = d.autoscale;
    p->checkout = d.checkout;
}

typedef struct ctx_s {
    shoal_config_t *c;
    shoal_diag_t *err;
} vctx_t;

static int check_map(vctx_t *v, const shoal_schema_t *s, const shoal_node_t *map, const char *path,
                     void *base, unsigned depth);

/* config.h */
bool shoal__config_split_behaviour(const char *text, char **plugin, char **beh)
{
    const char *dot = strchr(text, '.');
    if (dot == NULL || dot == text || dot[1] == '\0' || strchr(dot + 1, '.') != NULL)
        return false;
    for (const char *q = text; *q; q++)
        if (q != dot && !isalnum((unsigned char)*q) && *q != '_' && *q != '-')
            return false;
    *plugin = strndup(text, (size_t)(dot - text));
    *beh = dup(dot + 1);
    return *plugin != NULL && *beh != NULL;
}

const shoal_config_plugin_t *shoal__config_plugin(const shoal_config_t *c, const char *name)
{
    for (size_t i = 0; i < c->nplugins; i++)
        if (strcmp(c->plugins[i].name, name) == 0)
            return &c->plugins[i];
    return NULL;
}

static int check_pool(vctx_t *v, const shoal_node_t *map, const char *name, const char *path,
                      shoal_config_pool_t *p, unsigned depth);

/* A pool names what its workers (members) run once: `worker` or, for a
 * checkout pool, `member` -- never both. */
static int behaviour_once(vctx_t *v, const shoal_node_t *at, const char *key, const char *path,
                          const shoal_config_pool_t *p)
{
    if (p->worker_at == NULL)
        return SHOAL_OK;
    return shoal__node_fail(v->err, at,
                            "%s.%s: the pool's behaviour is given already (line %u); write "
                            "member for a checkout pool, worker for the others, not both",
                            path, key, p->worker_at->line);
}

static int set_worker(vctx_t *v, const shoal_node_t *w, const char *path, shoal_config_pool_t *p,
                      unsigned depth)
{
    int rc = behaviour_once(v, w, "worker", path, p);
    if (rc != SHOAL_OK)
        return rc;
    p->worker_at = w;
    if (w->kind == SHOAL_NODE_MAP) {
        if (depth + 1 >= SHOAL_POOL_MAX_DEPTH)
            return shoal__node_fail(v->err, w, "%s.worker: pools nest at most %u deep", path,
                                    SHOAL_POOL_MAX_DEPTH);
        if ((p->nested = calloc(1, sizeof *p->nested)) == NULL)
            return SHOAL_ENOMEM;
        char sub[256], subpath[320];
        snprintf(sub, sizeof sub, "%s/worker", p->name);
        snprintf(subpath, sizeof subpath, "%s.worker", path);
        if (strlen(sub) >= 64)
            return shoal__node_fail(
                v->err, w,
                "%s.worker: the nested pool would be named '%s': 63 characters at most "
                "(shorten the pool's name)",
                path, sub);
        return check_pool(v, w, sub, subpath, p->nested, depth + 1);
    }
    if (w->kind != SHOAL_NODE_SCALAR ||
        !shoal__config_split_behaviour(w->text, &p->plugin, &p->behaviour))
        return shoal__node_fail(
            v->err, w,
            "%s.worker: expected PLUGIN.BEHAVIOUR (e.g. echo.echo) or a pool mapping, got "
            "%s%s%s",
            path, w->kind == SHOAL_NODE_SCALAR ? "'" : "",
            w->kind == SHOAL_NODE_SCALAR ? w->text : shoal__node_kind_name(w),
            w->kind == SHOAL_NODE_SCALAR ? "'" : "");
    if (shoal__config_plugin(v->c, p->plugin) == NULL)
        return shoal__node_fail(v->err, w, "%s.worker: no plugin '%s' under plugins:", path,
                                p->plugin);
    return SHOAL_OK;
}

/* How a value is named in a message: 'text' for a scalar, "a list" else. */
static void shown(const shoal_node_t *n, char *buf, size_t size)
{
    if (n->kind == SHOAL_NODE_SCALAR)
        snprintf(buf, size, "'%.200s'", n->text);
    else
        snprintf(buf, size, "%s", shoal__node_kind_name(n));
}

/* A number written in quotes is a string: say so. */
static int quoted_number(vctx_t *v, const shoal_node_t *val, const char *path, const char *key)
{
    return shoal__node_fail(
        v->err, val,
        "%s.%s: expected an integer, got the string \"%.200s\" (write numbers without "
        "quotes)",
        path, key, val->text);
}

/* A key that takes a word (auto, off) for 0, or an integer in its range. */
static int word_or_int(vctx_t *v, const shoal_schema_key_t *k, const shoal_node_t *map,
                       const shoal_node_t *val, const char *path, const char *word, uint64_t *out)
{
    if (val->kind == SHOAL_NODE_SCALAR && !val->quoted && strcmp(val->text, word) == 0) {
        *out = 0;
        return SHOAL_OK;
    }
    if (val->kind == SHOAL_NODE_SCALAR && val->quoted)
        return quoted_number(v, val, path, k->key);
    int64_t x;
    if (shoal__arg_int(map, k->key, 0, k->min, k->max, &x, v->err) != SHOAL_OK) {
        char what[256];
        shown(val, what, sizeof what);
        return shoal__node_fail(
            v->err, val, "%s.%s: expected %s or an integer in %" PRId64 "..%" PRId64 ", got %s",
            path, k->key, word, k->min, k->max, what);
    }
    *out = (uint64_t)x;
    return SHOAL_OK;
}

/* A bound in ms as it is written: "365 days", "1 day", "10s", "250ms". */
static const char *ms_text(uint64_t ms, char *buf, size_t size)
{
    if (ms % 86400000u == 0)
        snprintf(buf, size, "%" PRIu64 " day%s", ms / 86400000u, ms == 86400000u ? "" : "s");
    else if (ms % 1000u == 0)
        snprintf(buf, size, "%" PRIu64 "s", ms / 1000u);
    else
        snprintf(buf, size, "%" PRIu64 "ms", ms);
    return buf;
}

/* metrics.listen: HOST:PORT (listen.h). */
static int set_listen(vctx_t *v, const shoal_schema_key_t *k, const shoal_node_t *map,
                      const shoal_node_t *val, const char *path, char *at)
{
    const char *s;
    int rc = shoal__arg_string(map, k->key, 0, &s, v->err);
    if (rc != SHOAL_OK)
        return shoal__arg_relabel(v->err, path, k->key, rc);
    shoal_listen_t **dst = (shoal_listen_t **)(void *)at;
    free(*dst);
    if ((*dst = malloc(sizeof **dst)) == NULL)
        return SHOAL_ENOMEM;
    char why[256];
    if (shoal__listen_parse(s, *dst, why, sizeof why) != 0)
        return shoal__node_fail(v->err, val, "%s.%s: %s, got '%.100s'", path, k->key, why, s);
    v->c->metrics.listen_at = val;
    return SHOAL_OK;
}

static int set_key(vctx_t *v, const shoal_schema_key_t *k, const shoal_node_t *map,
                   const shoal_node_t *val, const char *path, void *base, unsigned depth)
{
    char *at = (char *)base + k->offset;
    shoal_diag_t *err = v->err;
    int rc = SHOAL_OK;
    switch (k->type) {
    case SHOAL_KEY_U32: {
        int64_t x;
        if (val->kind == SHOAL_NODE_SCALAR && val->quoted)
            return quoted_number(v, val, path, k->key);
        if ((rc = shoal__arg_int(map, k->key, 0, k->min, k->max, &x, err)) != SHOAL_OK)
            return shoal__arg_relabel(err, path, k->key, rc);
        *(uint32_t *)(void *)at = (uint32_t)x;
        return SHOAL_OK;
    }
    case SHOAL_KEY_THREADS:
    case SHOAL_KEY_AUTO_U32: {
        uint64_t x;
        if ((rc = word_or_int(v, k, map, val, path, "auto", &x)) != SHOAL_OK)
            return rc;
        /* auto: 0 for threads, SHOAL_CONFIG_AUTO where 0 means none */
        bool is_auto = val->kind == SHOAL_NODE_SCALAR && strcmp(val->text, "auto") == 0;
        *(uint32_t *)(void *)at =
            is_auto && k->type == SHOAL_KEY_AUTO_U32 ? SHOAL_CONFIG_AUTO : (uint32_t)x;
        return SHOAL_OK;
    }
    case SHOAL_KEY_TIMEOUT: /* `never`, or a duration as below */
        if (val->kind == SHOAL_NODE_SCALAR && !val->quoted && strcmp(val->text, "never") == 0) {
            *(uint64_t *)(void *)at = 0;
            return SHOAL_OK;
        }
        /* fall through */
    case SHOAL_KEY_DURATION: {
        uint64_t ms;
        if ((rc = shoal__arg_duration_ms(map, k->key, 0, &ms, err)) != SHOAL_OK)
            return shoal__arg_relabel(err, path, k->key, rc);
        if (k->min > 0 && ms < (uint64_t)k->min)
            return shoal__node_fail(err, val, "%s.%s: must be at least %" PRId64 "ms%s, got '%s'",
                                    path, k->key, k->min,
                                    k->type == SHOAL_KEY_TIMEOUT ? " (or never)" : "", val->text);
        if (k->max > 0 && ms > (uint64_t)k->max) {
            char most[32];
            return shoal__node_fail(err, val, "%s.%s: at most %s, got '%s'", path, k->key,
                                    ms_text((uint64_t)k->max, most, sizeof most), val->text);
        }
        *(uint64_t *)(void *)at = ms;
        return SHOAL_OK;
    }
    case SHOAL_KEY_SPIN: {
        uint64_t us;
        if ((rc = shoal__arg_duration_us(map, k->key, 0, &us, err)) != SHOAL_OK)
            return shoal__arg_relabel(err, path, k->key, rc);
        if (us > (uint64_t)k->max)
            return shoal__node_fail(err, val, "%s.%s: at most 1s, got '%s'", path, k->key,
                                    val->text);
        *(uint32_t *)(void *)at = (uint32_t)us;
        return SHOAL_OK;
    }
    case SHOAL_KEY_ENUM: {
        unsigned i;
        if ((rc = shoal__arg_enum(map, k->key, 0, k->choices, &i, err)) != SHOAL_OK)
            return shoal__arg_relabel(err, path, k->key, rc);
        *(int *)(void *)at = (int)i; /* an enum key is an int field: its choice's index */
        return SHOAL_OK;
    }
    case SHOAL_KEY_PATH: {
        const char *s;
        if ((rc = shoal__arg_string(map, k->key, 0, &s, err)) != SHOAL_OK)
            return shoal__arg_relabel(err, path, k->key, rc);
        if (s[0] == '\0')
            return shoal__node_fail(err, val, "%s.%s: expected a path, got an empty string", path,
                                    k->key);
        char *full = shoal__config_path(v->c->dir, s);
        if (full == NULL)
            return SHOAL_ENOMEM;
        if (k->max != 0 && (int64_t)strlen(full) > k->max) {
            size_t n = strlen(full);
            free(full);
            return shoal__node_fail(err, val,
                                    "%s.%s: the path is %zu bytes as resolved: a socket's path "
                                    "holds at most %lld (write a shorter one)",
                                    path, k->key, n, (long long)k->max);
        }
        char **dst = (char **)(void *)at;
        free(*dst);
        *dst = full;
        return SHOAL_OK;
    }
    case SHOAL_KEY_MAILBOX: {
        if (val->kind == SHOAL_NODE_SCALAR && !val->quoted && strcmp(val->text, "unbounded") == 0) {
            *(uint32_t *)(void *)at = SHOAL_MAILBOX_UNBOUNDED;
            return SHOAL_OK;
        }
        if (val->kind == SHOAL_NODE_SCALAR && !val->quoted && strcmp(val->text, "0") == 0)
            return shoal__node_fail(
                err, val,
                "%s.mailbox: 0 would refuse every message: write a number >= 1, or "
                "unbounded",
                path);
        int64_t x;
        if (val->kind == SHOAL_NODE_SCALAR && val->quoted)
            return quoted_number(v, val, path, k->key);
        if ((rc = shoal__arg_int(map, k->key, 0, k->min, k->max, &x, err)) != SHOAL_OK) {
            char what[256];
            shown(val, what, sizeof what);
            return shoal__node_fail(err, val,
                                    "%s.mailbox: expected a number in 1..%u or unbounded, got %s",
                                    path, SHOAL_MAILBOX_MAX, what);
        }
        *(uint32_t *)(void *)at = (uint32_t)x;
        return SHOAL_OK;
    }
    case SHOAL_KEY_DIRS: {
        if (val->kind == SHOAL_NODE_SCALAR)
            return shoal__node_fail(err, val, "%s.%s: expected a list of directories: write [%s]",
                                    path, k->key, val->text);
        if (val->kind != SHOAL_NODE_LIST)
            return shoal__node_fail(err, val, "%s.%s: expected a list of directories, got %s", path,
                                    k->key, shoal__node_kind_name(val));
        for (size_t i = 0; i < val->n; i++)
            if (val->items[i]->kind != SHOAL_NODE_SCALAR || val->items[i]->text[0] == '\0')
                return shoal__node_fail(err, val->items[i], "%s.%s: expected a directory, got %s",
                                        path, k->key,
                                        val->items[i]->kind == SHOAL_NODE_SCALAR
                                            ? "an empty string"
                                            : shoal__node_kind_name(val->items[i]));
        *(const shoal_node_t **)(void *)at = val;
        return SHOAL_OK;
    }
    case SHOAL_KEY_LIMIT: {
        uint64_t x;
        if ((rc = word_or_int(v, k, map, val, path, "off", &x)) == SHOAL_OK)
            *(uint64_t *)(void *)at = x;
        return rc;
    }
    case SHOAL_KEY_LISTEN:
        return set_listen(v, k, map, val, path, at);
    case SHOAL_KEY_SECTION: {
        char sub[256];
        snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", k->key);
        /* A section's offsets are relative to what its parent fills: the
         * config at the top, a pool for its restart policy. */
        return check_map(v, k->sub, val, sub, base, depth);
    }
    case SHOAL_KEY_WHEN: /* parsed once the section is whole (config_elastic.c) */
        *(const shoal_node_t **)(void *)at = val;
        return SHOAL_OK;
    case SHOAL_KEY_ARGS:
        if (val->kind != SHOAL_NODE_MAP)
            return shoal__node_fail(err, val, "%s.args: expected a mapping, got %s", path,
                                    shoal__node_kind_name(val));
        ((shoal_config_pool_t *)base)->args = val;
        return SHOAL_OK;
    case SHOAL_KEY_WORKER:
        return set_worker(v, val, path, base, depth);
    case SHOAL_KEY_ACTOR:    /* a source's: a behaviour, never a pool */
    case SHOAL_KEY_MEMBER: { /* a checkout pool's: the same */
        shoal_config_pool_t *p = base;
        if ((rc = behaviour_once(v, val, k->key, path, p)) != SHOAL_OK)
            return rc;
        p->worker_at = val;
        if (val->kind != SHOAL_NODE_SCALAR ||
            !shoal__config_split_behaviour(val->text, &p->plugin, &p->behaviour))
            return shoal__node_fail(
                err, val, "%s.%s: expected PLUGIN.BEHAVIOUR (e.g. %s), got %s%s%s", path, k->key,
                k->type == SHOAL_KEY_ACTOR ? "loadgen.loadgen" : "conn.conn",
                val->kind == SHOAL_NODE_SCALAR ? "'" : "",
                val->kind == SHOAL_NODE_SCALAR ? val->text : shoal__node_kind_name(val),
                val->kind == SHOAL_NODE_SCALAR ? "'" : "");
        if (shoal__config_plugin(v->c, p->plugin) == NULL)
            return shoal__node_fail(err, val, "%s.%s: no plugin '%s' under plugins:", path, k->key,
                                    p->plugin);
        return SHOAL_OK;
    }
    case SHOAL_KEY_GROUP:
        return shoal__config_checkout_key(v->c, err, k, val, path, base);
    case SHOAL_KEY_SOURCE:
    case SHOAL_KEY_SOURCE_ARGS:
    case SHOAL_KEY_POOL_REF:
        return shoal__config_pull_key(v->c, err, k, val, path, base);
    case SHOAL_KEY_PLUGINS:
    case SHOAL_KEY_POOLS:
    case SHOAL_KEY_SOURCES:
        break; /* top level only: see check_top */
    }
    return SHOAL_OK;
}

static int check_map(vctx_t *v, const shoal_schema_t *s, const shoal_node_t *map, const char *path,
                     void *base, unsigned depth)
{
    if (map->kind != SHOAL_NODE_MAP && *path == '\0')
        return shoal__node_fail(v->err, map, "expected a mapping at the top level, got %s",
                                shoal__node_kind_name(map));
    if (map->kind != SHOAL_NODE_MAP)
        return shoal__node_fail(v->err, map, "%s: expected a mapping, got %s", path,
                                shoal__node_kind_name(map));
    for (size_t i = 0; i < map->n; i++) {
        const shoal_node_t *key = map->keys[i];
        const shoal_schema_key_t *k = NULL;
        for (size_t j = 0; j < s->nkeys && k == NULL; j++)
            if (strcmp(s->keys[j].key, key->text) == 0)
                k = &s->keys[j];
        if (k == NULL) {
            char keys[1024];
            key_list(s, keys, sizeof keys);
            if (*path == '\0')
                return shoal__node_fail(v->err, key,
                                        "unknown key '%s' at the top level (expected one of: %s)",
                                        key->text, keys);
            return shoal__node_fail(v->err, key, "unknown key '%s' in %s (expected one of: %s)",
                                    key->text, path, keys);
        }
        if (k->type == SHOAL_KEY_PLUGINS || k->type == SHOAL_KEY_POOLS ||
            k->type == SHOAL_KEY_SOURCES)
            continue; /* check_top, in order: plugins, pools, sources */
        int rc = set_key(v, k, map, map->items[i], path, base, depth);
        if (rc != SHOAL_OK)
            return rc;
    }
    return SHOAL_OK;
}

static int check_pool(vctx_t *v, const shoal_node_t *map, const char *name, const char *path,
                      shoal_config_pool_t *p, unsigned depth)
{
    pool_defaults(p);
    p->at = map;
    if ((p->name = dup(name)) == NULL || (p->path = dup(path)) == NULL)
        return SHOAL_ENOMEM;
    int rc = check_map(v, &shoal__schema_pool, map, path, p, depth);
    if (rc != SHOAL_OK)
        return rc;
    /* A checkout pool's rules are its own (config_checkout.c), its bounds
     * included; another kind refuses its keys there. */
    if ((rc = shoal__config_checkout_check(v->c, v->err, map, path, p, depth)) != SHOAL_OK ||
        p->kind == SHOAL_POOL_KIND_CHECKOUT)
        return rc;
    if (p->worker_at == NULL)
        return shoal__node_fail(
            v->err, map, "%s: missing key 'worker' (PLUGIN.BEHAVIOUR or a pool mapping)", path);
    if (depth > 0 && p->isolation != SHOAL_ISOLATION_NONE)
        return shoal__node_fail(
            v->err, shoal__node_get(map, "isolation"),
            "%s.isolation: only a pool under pools: can be isolated (the pools nested in "
            "it run in its process)",
            path);
    if ((rc = shoal__config_pull_check(v->c, v->err, map, path, p, depth)) != SHOAL_OK)
        return rc;
    if ((rc = shoal__config_elastic_check(v->c, v->err, map, path, p, depth)) != SHOAL_OK)
        return rc;
    const shoal_node_t *size_at = shoal__node_get(map, "size");
    p->size_given = size_at != NULL;
    const shoal_node_t *min_at = shoal__node_get(map, "min"), *max_at = shoal__node_get(map, "max");
    if (p->max_size == 0)
        p->max_size = p->size > 1024 ? p->size : 1024;
    if (size_at == NULL && p->size > p->max_size)
        return shoal__node_fail(v->err, max_at, "%s.max: %u is below the default size %u", path,
                                p->max_size, p->size);
    if (size_at == NULL && p->size < p->min_size)
        return shoal__node_fail(v->err, min_at, "%s.min: %u is above the default size %u", path,
                                p->min_size, p->size);
    if (p->size > p->max_size)
        return shoal__node_fail(v->err, size_at, "%s.size: %u is above max %u", path, p->size,
                                p->max_size);
    if (p->size < p->min_size)
        return shoal__node_fail(v->err, size_at, "%s.size: %u is below min %u", path, p->size,
                                p->min_size);
    return SHOAL_OK;
}

static int check_top(vctx_t *v, const shoal_node_t *root)
{
    shoal_config_t *c = v->c;
    int rc = check_map(v, &shoal__schema_top, root, "", c, 0);
    if (rc != SHOAL_OK)
        return rc;
    const shoal_node_t *plugins = shoal__node_get(root, "plugins");
    if (plugins != NULL && (rc = shoal__config_plugins(c, plugins, v->err)) != SHOAL_OK)
        return rc;
    const shoal_node_t *pools = shoal__node_get(root, "pools");
    if (pools == NULL)
        return shoal__node_fail(
            v->err, root, "missing key 'pools' at the top level (write `pools: {}` for none)");
    {
        if (pools->kind != SHOAL_NODE_MAP)
            return shoal__node_fail(v->err, pools,
                                    "pools: expected a mapping of NAME: POOL, got %s",
                                    shoal__node_kind_name(pools));
        if ((c->pools = calloc(pools->n ? pools->n : 1, sizeof *c->pools)) == NULL)
            return SHOAL_ENOMEM;
        for (size_t i = 0; i < pools->n; i++) {
            const char *name = pools->keys[i]->text;
            char bad[80];
            if (!shoal__config_name_ok(name, bad, sizeof bad))
                return shoal__node_fail(v->err, pools->keys[i],
                                        "pools: '%s' is not a pool name (%s)", bad,
                                        SHOAL_CONFIG_NAME_RULE);
            c->npools++;
            char path[80];
            snprintf(path, sizeof path, "pools.%s", name);
            if ((rc = check_pool(v, pools->items[i], name, path, &c->pools[i], 0)) != SHOAL_OK)
                return rc;
        }
    }
    if ((rc = shoal__config_check_sources(c, root, v->err)) != SHOAL_OK)
        return rc;
    return shoal__config_pull_links(c, v->err); /* names pools and sources apart */
}

int shoal__config_check_top(shoal_config_t *c, const shoal_node_t *root, shoal_diag_t *err)
{
    vctx_t v = {c, err};
    return check_top(&v, root);
}

int shoal__config_check_map(shoal_config_t *c, shoal_diag_t *err, const shoal_schema_t *s,
                            const shoal_node_t *map, const char *path, void *base)
{
    vctx_t v = {c, err};
    return check_map(&v, s, map, path, base, 0);
}

/* ---- public -------------------------------------------------------------- */

bool shoal__config_name_ok(const char *name, char *shown, size_t size)
{
    size_t n = strlen(name), o = 0;
    bool ok = n >= 1 && n <= 63;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)name[i];
        bool good = isalnum(ch) || ch == '_' || ch == '-' || ch == '.';
        ok = ok && good;
        if (o + 1 < size) /* as it can be shown: anything unprintable is a '?' */
            shown[o++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
    }
    if (size != 0)
        shown[o < size ? o : size - 1] = '\0';
    return ok;
}
