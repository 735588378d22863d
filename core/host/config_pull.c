/* config_pull.c - a pool's `kind:` and the keys only a pull pool takes
 * (shoal/pull.h): prefetch, buffer, redeliver, dead_letter, source,
 * source_args. config.c reads the plain numbers from the schema table and
 * hands the rest here; then, per pool, the keys of one kind are refused on
 * the other, and once every pool is known each dead_letter is resolved to
 * a pool and the pools are ordered so a dead-letter target starts before
 * the pools that name it. Every error names file:line:column. See config.h.
 *
 * Choices made here (and printed by --help-config):
 * - `mailbox` stays allowed on a pull pool: each worker still has its own
 *   mailbox, for messages sent to it directly; work comes from the buffer.
 * - A pull pool is a pool under pools: whose worker is PLUGIN.BEHAVIOUR:
 *   nesting a pool in it, nesting it in a pool, and `isolation: process`
 *   are not supported for pull pools.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/config.h"
#include "host/schema.h"

/* The keys a forward pool refuses. */
static const char *const pull_only[] = {"prefetch",    "buffer", "redeliver",
                                        "dead_letter", "source", "source_args"};
#define NPULL_ONLY (sizeof pull_only / sizeof pull_only[0])

/* The key node called name in map, or NULL. */
static const shoal_node_t *key_node(const shoal_node_t *map, const char *name)
{
    for (size_t i = 0; i < map->n; i++)
        if (strcmp(map->keys[i]->text, name) == 0)
            return map->keys[i];
    return NULL;
}

/* "'text'" for a scalar, "a list" / "a mapping" else. */
static void shown(const shoal_node_t *n, char *buf, size_t size)
{
    if (n->kind == SHOAL_NODE_SCALAR)
        snprintf(buf, size, "'%.200s'", n->text);
    else
        snprintf(buf, size, "%s", shoal__node_kind_name(n));
}

int shoal__config_pull_key(shoal_config_t *c, shoal_diag_t *err, const shoal_schema_key_t *k,
                           const shoal_node_t *val, const char *path, shoal_config_pool_t *p)
{
    char what[256];
    shown(val, what, sizeof what);
    switch (k->type) {
    case SHOAL_KEY_SOURCE:
        p->src_at = val;
        if (val->kind != SHOAL_NODE_SCALAR ||
            !shoal__config_split_behaviour(val->text, &p->src_plugin, &p->src_behaviour))
            return shoal__node_fail(err, val,
                                    "%s.source: expected PLUGIN.BEHAVIOUR (e.g. burn.burn), got %s",
                                    path, what);
        if (shoal__config_plugin(c, p->src_plugin) == NULL)
            return shoal__node_fail(err, val, "%s.source: no plugin '%s' under plugins:", path,
                                    p->src_plugin);
        return SHOAL_OK;
    case SHOAL_KEY_SOURCE_ARGS:
        if (val->kind != SHOAL_NODE_MAP)
            return shoal__node_fail(err, val, "%s.source_args: expected a mapping, got %s", path,
                                    shoal__node_kind_name(val));
        p->src_args = val;
        return SHOAL_OK;
    case SHOAL_KEY_POOL_REF: {
        char bad[80];
        if (val->kind != SHOAL_NODE_SCALAR || !shoal__config_name_ok(val->text, bad, sizeof bad))
            return shoal__node_fail(err, val,
                                    "%s.%s: expected the name of a pool under pools:, got %s", path,
                                    k->key, what);
        free(p->dead_letter);
        p->dead_letter_at = val;
        return (p->dead_letter = strdup(val->text)) != NULL ? SHOAL_OK : SHOAL_ENOMEM;
    }
    default:
        return shoal__node_fail(err, val, "%s.%s: not a pull pool's key", path, k->key);
    }
}

int shoal__config_pull_check(shoal_config_t *c, shoal_diag_t *err, const shoal_node_t *map,
                             const char *path, shoal_config_pool_t *p, unsigned depth)
{
    (void)c;
    if (p->kind != SHOAL_POOL_KIND_PULL) {
        /* The first pull-only key in the file's order, at the key. */
        for (size_t i = 0; i < map->n; i++)
            for (size_t j = 0; j < NPULL_ONLY; j++)
                if (strcmp(map->keys[i]->text, pull_only[j]) == 0)
                    return shoal__node_fail(err, map->keys[i],
                                            "%s.%s: only a pull pool takes %s (this one is kind: "
                                            "forward; write kind: pull)",
                                            path, pull_only[j], pull_only[j]);
        return SHOAL_OK;
    }
    const shoal_node_t *at;
    if (depth > 0)
        return shoal__node_fail(err, key_node(map, "kind"),
                                "%s.kind: a nested pool is not supported for pull pools (a pull "
                                "pool goes directly under pools:)",
                                path);
    if (p->nested != NULL)
        return shoal__node_fail(err, p->worker_at,
                                "%s.worker: a nested pool is not supported for pull pools (write "
                                "PLUGIN.BEHAVIOUR)",
                                path);
    if ((at = key_node(map, "strategy")) != NULL)
        return shoal__node_fail(err, at,
                                "%s.strategy: a pull pool takes no strategy (its workers take the "
                                "next item when they are free)",
                                path);
    if (p->isolation != SHOAL_ISOLATION_NONE)
        return shoal__node_fail(err, key_node(map, "isolation"),
                                "%s.isolation: process is not supported for pull pools (write "
                                "isolation: none, or leave it out)",
                                path);
    if (p->src_args != NULL && p->src_plugin == NULL && (at = key_node(map, "source_args")))
        return shoal__node_fail(err, at,
                                "%s.source_args: there is no source to give them to (add source: "
                                "PLUGIN.BEHAVIOUR)",
                                path);
    return SHOAL_OK;
}

/* The index of the top-level pool called name, or npools. */
static size_t pool_index(const shoal_config_t *c, const char *name)
{
    size_t i = 0;
    while (i < c->npools && strcmp(c->pools[i].name, name) != 0)
        i++;
    return i;
}

/* Appends i to c->order after its dead_letter target (no cycles by now). */
static void order_visit(shoal_config_t *c, const size_t *target, bool *seen, size_t i, size_t *n)
{
    while (!seen[i]) { /* the chain's end first: walk it, then add back to front */
        size_t j = i;
        while (target[j] != c->npools && !seen[target[j]])
            j = target[j];
        seen[j] = true;
        c->order[(*n)++] = j;
    }
}

int shoal__config_pull_links(shoal_config_t *c, shoal_diag_t *err)
{
    size_t n = c->npools ? c->npools : 1;
    size_t *target = calloc(n, sizeof *target);
    bool *seen = calloc(n, sizeof *seen);
    int rc = SHOAL_ENOMEM;
    if (target == NULL || seen == NULL || (c->order = calloc(n, sizeof *c->order)) == NULL)
        goto done;
    for (size_t i = 0; i < c->npools; i++) {
        const shoal_config_pool_t *p = &c->pools[i];
        target[i] = c->npools;
        if (p->dead_letter == NULL)
            continue;
        const char *name = p->dead_letter;
        rc = SHOAL_EINVAL;
        if (strcmp(name, p->name) == 0) {
            shoal__node_fail(err, p->dead_letter_at,
                             "%s.dead_letter: '%s' is this pool itself (name another pool under "
                             "pools:, or leave it out: items are then dropped, counted)",
                             p->path, name);
            goto done;
        }
        if ((target[i] = pool_index(c, name)) == c->npools) {
            const shoal_config_pool_t *s = shoal__config_source(c, name);
            if (s != NULL)
                shoal__node_fail(err, p->dead_letter_at,
                                 "%s.dead_letter: '%s' is a source (line %u), not a pool: name a "
                                 "pool under pools:",
                                 p->path, name, s->at->line);
            else
                shoal__node_fail(err, p->dead_letter_at,
                                 "%s.dead_letter: no pool '%s' under pools:", p->path, name);
            goto done;
        }
    }
    /* A cycle is reported at the first of its pools in the file. */
    for (size_t i = 0; i < c->npools; i++) {
        size_t j = target[i], steps = 0;
        while (j != c->npools && j != i && steps++ < c->npools)
            j = target[j];
        if (j != i)
            continue;
        char chain[400];
        size_t len = (size_t)snprintf(chain, sizeof chain, "%s", c->pools[i].name);
        j = i;
        do {
            j = target[j];
            if (len < sizeof chain)
                len +=
                    (size_t)snprintf(chain + len, sizeof chain - len, " -> %s", c->pools[j].name);
        } while (j != i);
        shoal__node_fail(err, c->pools[i].dead_letter_at,
                         "%s.dead_letter: a cycle of dead letters (%s): an item could go round "
                         "it for ever",
                         c->pools[i].path, chain);
        rc = SHOAL_EINVAL;
        goto done;
    }
    size_t placed = 0;
    for (size_t i = 0; i < c->npools; i++)
        order_visit(c, target, seen, i, &placed);
    rc = SHOAL_OK;
done:
    free(target);
    free(seen);
    return rc;
}

void shoal__config_pull_describe(const shoal_config_pool_t *p, char *buf, size_t size)
{
    char mailbox[24], source[160];
    if (p->mailbox == SHOAL_MAILBOX_UNBOUNDED)
        snprintf(mailbox, sizeof mailbox, "unbounded");
    else
        snprintf(mailbox, sizeof mailbox, "%u", p->mailbox);
    if (p->src_plugin != NULL)
        snprintf(source, sizeof source, "%s.%s%s", p->src_plugin, p->src_behaviour,
                 p->src_args != NULL ? " (with source_args)" : "");
    else
        snprintf(source, sizeof source, "none");
    snprintf(buf, size,
             "pool %s: pull, %u worker%s (%s.%s), mailbox %s, prefetch %u, buffer %u, redeliver "
             "%u, dead_letter %s, source %s",
             p->name, p->size, p->size == 1 ? "" : "s", p->plugin, p->behaviour, mailbox,
             p->prefetch, p->buffer, p->redeliver,
             p->dead_letter ? p->dead_letter : "none (counted failed)", source);
}
