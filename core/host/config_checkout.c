/* config_checkout.c - a checkout pool in the config (kind: checkout,
 * shoal/checkout.h): its members (`member:`, not `worker:`), `init` (not
 * `size`), `max` (default: init), the keys only it takes, and the keys of
 * the other kinds it refuses -- each error at its key's file:line:column.
 * See config.h.
 *
 * Choices made here (and printed by --help-config):
 * - `member` and `init` are pooler's words for what `worker` and `size` are
 *   to the other kinds; a checkout pool takes only its own words, so a
 *   config says which kind it means.
 * - `mailbox`, `args` and `restart` stay: a member has a mailbox of its
 *   own for its consumer's messages, args for its init, and the backoff
 *   after add_member_retry failed starts is restart.backoff.
 * - A checkout pool goes directly under pools:, not nested and not
 *   isolated: its members are taken by PID in this process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/config.h"
#include "host/schema.h"
#include "pool/pool.h"

/* The keys only a checkout pool takes. */
static const char *const checkout_only[] = {"member",
                                            "init",
                                            "add_member_retry",
                                            "member_start_timeout",
                                            "cull_interval",
                                            "max_age",
                                            "max_lifetime",
                                            "max_lifetime_jitter",
                                            "queue_max",
                                            "lease",
                                            "group"};
#define NCHECKOUT_ONLY (sizeof checkout_only / sizeof checkout_only[0])

/* The keys of other kinds a checkout pool refuses, and what to write. */
static const struct {
    const char *key, *instead;
} refused[] = {
    {"worker", "write member: PLUGIN.BEHAVIOUR -- its members are taken, not sent work"},
    {"size", "write init: the members started with the pool"},
    {"min", "its floor is init: culling never goes below it"},
    {"idle_timeout", "write max_age and cull_interval: free members unused that long end"},
    {"max_waiting", "write queue_max: the takers that may wait at once"},
    {"autoscale", "it grows on demand up to max and is culled back to init"},
    {"prefetch", "only a pull pool takes prefetch"},
    {"buffer", "only a pull pool takes buffer"},
    {"redeliver", "only a pull pool takes redeliver"},
    {"dead_letter", "only a pull pool takes dead_letter"},
    {"source", "only a pull pool takes source"},
    {"source_args", "only a pull pool takes source_args"},
};
#define NREFUSED (sizeof refused / sizeof refused[0])

int shoal__config_checkout_key(shoal_config_t *c, shoal_diag_t *err, const shoal_schema_key_t *k,
                               const shoal_node_t *val, const char *path, shoal_config_pool_t *p)
{
    (void)c;
    char bad[80];
    if (val->kind != SHOAL_NODE_SCALAR || !shoal__config_name_ok(val->text, bad, sizeof bad))
        return shoal__node_fail(err, val, "%s.%s: expected a group NAME (%s), got %s%s%s", path,
                                k->key, SHOAL_CONFIG_NAME_RULE,
                                val->kind == SHOAL_NODE_SCALAR ? "'" : "",
                                val->kind == SHOAL_NODE_SCALAR ? bad : shoal__node_kind_name(val),
                                val->kind == SHOAL_NODE_SCALAR ? "'" : "");
    free(p->co_group);
    if ((p->co_group = strdup(val->text)) == NULL)
        return SHOAL_ENOMEM;
    p->checkout.group = p->co_group;
    return SHOAL_OK;
}

int shoal__config_checkout_check(shoal_config_t *c, shoal_diag_t *err, const shoal_node_t *map,
                                 const char *path, shoal_config_pool_t *p, unsigned depth)
{
    (void)c;
    if (p->kind != SHOAL_POOL_KIND_CHECKOUT) {
        /* The first checkout-only key in the file's order, at the key. */
        for (size_t i = 0; i < map->n; i++)
            for (size_t j = 0; j < NCHECKOUT_ONLY; j++)
                if (strcmp(map->keys[i]->text, checkout_only[j]) == 0)
                    return shoal__node_fail(err, map->keys[i],
                                            "%s.%s: only a checkout pool takes %s (this one is "
                                            "kind: %s; write kind: checkout)",
                                            path, checkout_only[j], checkout_only[j],
                                            shoal__pool_kind_name((uint32_t)p->kind));
        if (p->strategy == SHOAL_POOL_STRATEGY_LIFO)
            return shoal__node_fail(err, shoal__node_get(map, "strategy"),
                                    "%s.strategy: lifo is a checkout pool's (a %s pool takes "
                                    "fifo, least_loaded or round_robin)",
                                    path, shoal__pool_kind_name((uint32_t)p->kind));
        return SHOAL_OK;
    }
    const shoal_node_t *kind_at = shoal__node_get(map, "kind");
    for (size_t i = 0; i < map->n; i++) {
        const char *key = map->keys[i]->text;
        for (size_t j = 0; j < NREFUSED; j++)
            if (strcmp(key, refused[j].key) == 0)
                return shoal__node_fail(err, map->keys[i], "%s.%s: not a checkout pool's key (%s)",
                                        path, key, refused[j].instead);
    }
    if (depth > 0)
        return shoal__node_fail(err, kind_at,
                                "%s.kind: a checkout pool goes directly under pools:, not nested "
                                "in a pool",
                                path);
    if (p->isolation != SHOAL_ISOLATION_NONE)
        return shoal__node_fail(err, shoal__node_get(map, "isolation"),
                                "%s.isolation: process is not supported for checkout pools (its "
                                "members are taken by PID in this process)",
                                path);
    if (p->worker_at == NULL)
        return shoal__node_fail(err, map, "%s: missing key 'member' (PLUGIN.BEHAVIOUR)", path);
    if (p->strategy != SHOAL_POOL_STRATEGY_FIFO && p->strategy != SHOAL_POOL_STRATEGY_LIFO)
        return shoal__node_fail(err, shoal__node_get(map, "strategy"),
                                "%s.strategy: a checkout pool takes fifo (the member free the "
                                "longest) or lifo (the member given back last), not %s",
                                path, shoal__pool_strategy_name((uint32_t)p->strategy));
    const shoal_node_t *init_at = shoal__node_get(map, "init");
    const shoal_node_t *max_at = shoal__node_get(map, "max");
    if (init_at == NULL)
        p->size = 1;
    p->min_size = 0;
    if (max_at == NULL)
        p->max_size = p->size > 1 ? p->size : 1;
    if (p->size > p->max_size)
        return shoal__node_fail(err, init_at != NULL ? init_at : max_at,
                                "%s.%s: init %u is above max %u", path,
                                init_at != NULL ? "init" : "max", p->size, p->max_size);
    const shoal_pool_checkout_t *k = &p->checkout;
    if (k->max_lifetime_jitter_ms != 0 && k->max_lifetime_jitter_ms >= k->max_lifetime_ms)
        return shoal__node_fail(err, shoal__node_get(map, "max_lifetime_jitter"),
                                "%s.max_lifetime_jitter: %llums is not below max_lifetime (%s)",
                                path, (unsigned long long)k->max_lifetime_jitter_ms,
                                k->max_lifetime_ms ? "write a smaller jitter" : "never: no jitter");
    return SHOAL_OK;
}

static void ms_text(uint64_t ms, char *buf, size_t size)
{
    if (ms == 0)
        snprintf(buf, size, "never");
    else
        snprintf(buf, size, "%llums", (unsigned long long)ms);
}

void shoal__config_checkout_describe(const shoal_config_pool_t *p, char *buf, size_t size)
{
    const shoal_pool_checkout_t *k = &p->checkout;
    char cull[32], life[32];
    ms_text(k->cull_interval_ms, cull, sizeof cull);
    ms_text(k->max_lifetime_ms, life, sizeof life);
    snprintf(buf, size,
             "pool %s: checkout, %u..%u members (%s.%s), %s, queue_max %u, lease %llums, "
             "cull_interval %s, max_age %llums, max_lifetime %s (+/- %llums), group %s",
             p->name, p->size, p->max_size, p->plugin, p->behaviour,
             shoal__pool_strategy_name((uint32_t)p->strategy), k->queue_max,
             (unsigned long long)k->lease_ms, cull, (unsigned long long)k->max_age_ms, life,
             (unsigned long long)k->max_lifetime_jitter_ms, k->group ? k->group : "none");
}
