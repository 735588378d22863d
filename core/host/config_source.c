/* config_source.c - the `sources:` section (config.h): singleton actors,
 * each checked against shoal__schema_source into a shoal_config_pool_t
 * marked `source` (size 1: the host keeps it in a record like a pool's of
 * one worker, host/source.h).
 */
#include <stdlib.h>
#include <string.h>

#include "host/config.h"
#include "host/schema.h"

/* A source's defaults: one actor, a mailbox for what it sends itself. */
static void source_defaults(shoal_config_pool_t *p)
{
    p->size = 1;
    p->min_size = 1;
    p->max_size = 1;
    p->mailbox = 64;
    p->restart = (shoal_pool_restart_t){.max = 5, .within_ms = 5000, .backoff_ms = 100};
    p->warn_queue = 0;
    p->source = true;
}

const shoal_config_pool_t *shoal__config_source(const shoal_config_t *c, const char *name)
{
    for (size_t i = 0; i < c->nsources; i++)
        if (strcmp(c->sources[i].name, name) == 0)
            return &c->sources[i];
    return NULL;
}

int shoal__config_check_sources(shoal_config_t *c, const shoal_node_t *root, shoal_diag_t *err)
{
    const shoal_node_t *sources = shoal__node_get(root, "sources");
    if (sources == NULL)
        return SHOAL_OK;
    if (sources->kind != SHOAL_NODE_MAP)
        return shoal__node_fail(err, sources, "sources: expected a mapping of NAME: SOURCE, got %s",
                                shoal__node_kind_name(sources));
    if ((c->sources = calloc(sources->n ? sources->n : 1, sizeof *c->sources)) == NULL)
        return SHOAL_ENOMEM;
    for (size_t i = 0; i < sources->n; i++) {
        const shoal_node_t *key = sources->keys[i], *map = sources->items[i];
        const char *name = key->text;
        char bad[80];
        if (!shoal__config_name_ok(name, bad, sizeof bad))
            return shoal__node_fail(err, key, "sources: '%s' is not a source name (%s)", bad,
                                    SHOAL_CONFIG_NAME_RULE);
        const shoal_config_pool_t *pool = shoal__config_pool(c, name);
        if (pool != NULL)
            return shoal__node_fail(err, key,
                                    "sources.%s: the name is taken by pools.%s (line %u): a name "
                                    "is one actor, a pool or a source",
                                    name, name, pool->at->line);
        shoal_config_pool_t *p = &c->sources[c->nsources++];
        source_defaults(p);
        p->at = map;
        char path[80];
        snprintf(path, sizeof path, "sources.%s", name);
        if ((p->name = strdup(name)) == NULL || (p->path = strdup(path)) == NULL)
            return SHOAL_ENOMEM;
        int rc = shoal__config_check_map(c, err, &shoal__schema_source, map, path, p);
        if (rc != SHOAL_OK)
            return rc;
        if (p->worker_at == NULL)
            return shoal__node_fail(err, map, "%s: missing key 'actor' (PLUGIN.BEHAVIOUR)", path);
    }
    return SHOAL_OK;
}
