/* config_resolve.c - what is done with a config once it is checked
 * (config.c): its plugins loaded and every pool's and source's behaviour
 * found, their args checked against the behaviour's schema (resolve); an
 * isolated pool's child's view of it (isolate); lookups; freeing it.
 */
#include "host/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/argcheck.h"
#include "host/plugin_path.h"

/* The behaviour PLUGIN.BEHAVIOUR names (its plugin loaded), with args
 * (named `label` in messages) checked against its schema: *module gets a
 * reference. SHOAL_ELOAD at `at` (the key's value, named `key`) when the
 * plugin has no such behaviour. */
static int resolve_behaviour(shoal_config_t *c, const char *plugin, const char *beh,
                             const shoal_node_t *at, const char *path, const char *key,
                             const shoal_node_t *args, const shoal_node_t *pool_at,
                             const char *label, shoal_module_t **module,
                             const shoal_behaviour_t **out, shoal_diag_t *err)
{
    const shoal_config_plugin_t *pl = shoal__config_plugin(c, plugin);
    const shoal_behaviour_t *b = pl && pl->module ? shoal__module_behaviour(pl->module, beh) : NULL;
    if (b == NULL) {
        char list[256];
        size_t n = 0, count = pl && pl->module ? shoal__module_behaviour_count(pl->module) : 0;
        list[0] = '\0';
        for (size_t i = 0; i < count && n < sizeof list; i++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "",
                                  shoal__module_behaviour_at(pl->module, i)->name);
        shoal__node_fail(err, at, "%s.%s: plugin '%s' has no behaviour '%s' (it has: %s)", path,
                         key, plugin, beh, list);
        return SHOAL_ELOAD;
    }
    /* The args against the behaviour's schema, if it declares one. */
    char name[160];
    snprintf(name, sizeof name, "%s.%s", plugin, beh);
    int rc = shoal__argcheck_args_at(b->args, args, pool_at, label, name, err);
    if (rc != SHOAL_OK)
        return rc;
    shoal__module_ref(pl->module);
    *module = pl->module;
    *out = b;
    return SHOAL_OK;
}

static int resolve_pool(shoal_config_t *c, shoal_config_pool_t *p, shoal_diag_t *err)
{
    if (p->nested != NULL)
        return resolve_pool(c, p->nested, err);
    char label[200];
    int rc = SHOAL_OK;
    if (p->module == NULL) { /* else resolved before */
        snprintf(label, sizeof label, "%.150s.args", p->path);
        rc = resolve_behaviour(c, p->plugin, p->behaviour, p->worker_at, p->path,
                               p->source                             ? "actor"
                               : p->kind == SHOAL_POOL_KIND_CHECKOUT ? "member"
                                                                     : "worker",
                               p->args, p->at, label, &p->module, &p->beh, err);
    }
    /* A pull pool's source: its args are `source_args:`. */
    if (rc == SHOAL_OK && p->src_plugin != NULL && p->src_module == NULL) {
        snprintf(label, sizeof label, "%.150s.source_args", p->path);
        rc = resolve_behaviour(c, p->src_plugin, p->src_behaviour, p->src_at, p->path, "source",
                               p->src_args, p->at, label, &p->src_module, &p->src_beh, err);
    }
    return rc;
}

int shoal__config_resolve(shoal_config_t *c, shoal_loader_t *loader, shoal_diag_t *err)
{
    return shoal__config_resolve_until(c, loader, NULL, NULL, err);
}

int shoal__config_resolve_until(shoal_config_t *c, shoal_loader_t *loader, bool (*stop)(void *),
                                void *arg, shoal_diag_t *err)
{
    int found = shoal__config_find_plugins(c, err);
    if (found != SHOAL_OK)
        return found;
    for (size_t i = 0; i < c->nplugins; i++) {
        shoal_config_plugin_t *pl = &c->plugins[i];
        shoal_diag_t why = {0};
        if (pl->module != NULL)
            continue;
        if (stop != NULL && stop(arg)) {
            shoal__node_fail(err, pl->at, "plugins.%s: not loaded: shoald is stopping", pl->name);
            return SHOAL_ESHUTDOWN;
        }
        int rc = shoal__module_load(loader, pl->path, &pl->module, &why);
        if (rc != SHOAL_OK) {
            pl->module = NULL;
            shoal__node_fail(err, pl->at, "plugins.%s: %s: %s", pl->name,
                             pl->shown ? pl->shown : pl->path,
                             why.msg[0] ? why.msg : shoal_strerror(rc));
            return rc == SHOAL_ENOMEM ? rc : SHOAL_ELOAD;
        }
        if (pl->shown != NULL && (rc = shoal__module_show_as(pl->module, pl->shown)) != SHOAL_OK)
            return rc;
    }
    for (size_t i = 0; i < c->npools + c->nsources; i++) {
        int rc = resolve_pool(c, i < c->npools ? &c->pools[i] : &c->sources[i - c->npools], err);
        if (rc != SHOAL_OK)
            return rc;
    }
    return SHOAL_OK;
}

static void pool_free(shoal_config_pool_t *p)
{
    if (p->nested != NULL) {
        pool_free(p->nested);
        free(p->nested);
    }
    if (p->module != NULL)
        shoal__module_release(p->module);
    if (p->src_module != NULL)
        shoal__module_release(p->src_module);
    free(p->dead_letter);
    free(p->co_group);
    free(p->src_plugin);
    free(p->src_behaviour);
    free(p->name);
    free(p->path);
    free(p->plugin);
    free(p->behaviour);
}

void shoal__config_free(shoal_config_t *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->npools; i++)
        pool_free(&c->pools[i]);
    free(c->pools);
    shoal__name_index_free(&c->pool_names);
    free(c->order);
    for (size_t i = 0; i < c->nsources; i++)
        pool_free(&c->sources[i]);
    free(c->sources);
    for (size_t i = 0; i < c->nplugins; i++) {
        if (c->plugins[i].module != NULL)
            shoal__module_release(c->plugins[i].module);
        free(c->plugins[i].name);
        free(c->plugins[i].path);
        free(c->plugins[i].file);
        free(c->plugins[i].shown);
    }
    free(c->plugins);
    free(c->runtime.control);
    free(c->metrics.listen);
    shoal__node_free(c->root);
    free(c->file);
    free(c->dir);
    free(c->text);
    free(c);
}

int shoal__config_isolate(shoal_config_t *c, const char *name, const char *plugin_path,
                          shoal_diag_t *err)
{
    size_t keep = c->npools;
    for (size_t i = 0; i < c->npools; i++)
        if (strcmp(c->pools[i].name, name) == 0)
            keep = i;
    if (keep == c->npools) {
        shoal__diag_set(err, c->file, 0, 0, "no pool '%s' in the file", name);
        return SHOAL_EINVAL;
    }
    for (size_t i = 0; i < c->npools; i++)
        if (i != keep)
            pool_free(&c->pools[i]);
    if (keep != 0)
        c->pools[0] = c->pools[keep];
    c->npools = 1;
    shoal__config_index_pools(c); /* its one pool now */
    if (c->order != NULL)
        c->order[0] = 0;
    for (size_t i = 0; i < c->nsources; i++) /* the parent runs them */
        pool_free(&c->sources[i]);
    c->nsources = 0;
    shoal_config_pool_t *p = &c->pools[0];
    p->isolation = SHOAL_ISOLATION_NONE; /* here, it is the process's own */
    const shoal_config_pool_t *leaf = p;
    while (leaf->nested != NULL)
        leaf = leaf->nested;
    size_t used = c->nplugins;
    for (size_t i = 0; i < c->nplugins; i++) {
        if (strcmp(c->plugins[i].name, leaf->plugin) == 0) {
            used = i;
            continue;
        }
        free(c->plugins[i].name);
        free(c->plugins[i].path);
        free(c->plugins[i].file);
        free(c->plugins[i].shown);
    }
    if (used == c->nplugins) { /* (validation saw it there) */
        shoal__diag_set(err, c->file, 0, 0, "no plugin '%s' in the file", leaf->plugin);
        c->nplugins = 0;
        return SHOAL_EINVAL;
    }
    c->plugins[0] = c->plugins[used];
    c->nplugins = 1;
    char *at = strdup(plugin_path);
    if (at == NULL)
        return SHOAL_ENOMEM;
    free(c->plugins[0].shown);
    /* A crash names the configured file (a name is not searched again). */
    c->plugins[0].shown = c->plugins[0].path ? c->plugins[0].path : strdup(c->plugins[0].file);
    c->plugins[0].path = at;
    if (c->plugins[0].shown == NULL)
        return SHOAL_ENOMEM;
    free(c->runtime.control);
    c->runtime.control = NULL;
    return SHOAL_OK;
}

static const char *pool_name_at(const void *arr, size_t i)
{
    return ((const shoal_config_pool_t *)arr)[i].name;
}

void shoal__config_index_pools(shoal_config_t *c)
{
    shoal__name_index_free(&c->pool_names);
    (void)shoal__name_index_build(&c->pool_names, c->pools, c->npools, pool_name_at);
}

const shoal_config_pool_t *shoal__config_pool(const shoal_config_t *c, const char *name)
{
    if (shoal__name_index_ready(&c->pool_names)) {
        size_t i = shoal__name_index_find(&c->pool_names, c->pools, pool_name_at, name);
        return i != SIZE_MAX ? &c->pools[i] : NULL;
    }
    for (size_t i = 0; i < c->npools; i++)
        if (strcmp(c->pools[i].name, name) == 0)
            return &c->pools[i];
    return NULL;
}
