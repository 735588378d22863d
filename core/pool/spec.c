/* spec.c - a pool's spec: checked before anything is spawned (every kind's
 * rules, each nested spec's in turn), and copied into the record, the
 * chain of nested specs with it, names included (the caller's strings are
 * not kept).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool/checkout.h"
#include "pool/elastic.h"
#include "pool/pool.h"

/* A nested spec kept by the pool, with its own copy of the name. */
typedef struct nested_spec_s {
    shoal_pool_spec_t spec;
    char name[64];
} nested_spec_t;

uint32_t shoal__pool_max_of(const shoal_pool_spec_t *s)
{
    if (s->max_size != 0)
        return s->max_size;
    if (s->kind == SHOAL_POOL_KIND_CHECKOUT) /* grows only when told to */
        return s->size > 1 ? s->size : 1;
    return s->size > 1024 ? s->size : 1024;
}

int shoal__pool_spec_check(const shoal_pool_spec_t *s, uint32_t depth, bool remote)
{
    if ((s->worker == NULL) == (s->worker_pool == NULL))
        return SHOAL_EINVAL; /* exactly one of them */
    if (s->worker != NULL && s->worker->handle_message == NULL)
        return SHOAL_EINVAL;
    if (depth >= SHOAL_POOL_MAX_DEPTH)
        return SHOAL_EINVAL;
    uint32_t max = shoal__pool_max_of(s);
    bool checkout = s->kind == SHOAL_POOL_KIND_CHECKOUT; /* its floor is `init` (size) */
    if ((!checkout && s->min_size > s->size) || s->size > max || max > SHOAL_POOL_MAX_SIZE)
        return SHOAL_EINVAL;
    if (s->mailbox == 0 ||
        (s->mailbox > SHOAL_MAILBOX_MAX && s->mailbox != SHOAL_MAILBOX_UNBOUNDED))
        return SHOAL_EINVAL;
    if (s->restart.within_ms == 0 || s->restart.backoff_ms == 0 ||
        s->restart.within_ms > UINT64_MAX / 1000000u)
        return SHOAL_EINVAL;
    if (s->name != NULL && strlen(s->name) >= sizeof((nested_spec_t *)0)->name)
        return SHOAL_EINVAL;
    if (s->kind == SHOAL_POOL_KIND_PULL) {
        /* A member takes on its own thread: it is an actor, not a pool. */
        if (s->worker_pool != NULL || s->prefetch == 0 || s->prefetch > SHOAL_POOL_MAX_PREFETCH ||
            s->buffer > SHOAL_POOL_MAX_BUFFER)
            return SHOAL_EINVAL;
        if (s->source != NULL && s->source->handle_message == NULL)
            return SHOAL_EINVAL;
        if (s->redeliver > SHOAL_POOL_MAX_REDELIVER || s->strategy != SHOAL_POOL_STRATEGY_FIFO)
            return SHOAL_EINVAL;
    } else if (checkout) {
        /* Its members are taken, not worked for: never nested, no manager
         * beside it, no elastic settings (checkout.c). */
        return depth == 0 && s->manager == NULL ? shoal__checkout_check(s) : SHOAL_EINVAL;
    } else if (s->kind != SHOAL_POOL_KIND_FORWARD ||
               s->strategy > SHOAL_POOL_STRATEGY_ROUND_ROBIN) {
        return SHOAL_EINVAL;
    }
    shoal_pool_elastic_t el = {s->idle_timeout_ms, s->max_waiting, s->autoscale};
    int rc = shoal__pool_elastic_check(s, &el, remote);
    if (rc != SHOAL_OK)
        return rc == SHOAL_ENOTSUP ? SHOAL_EINVAL : rc;
    return s->worker_pool ? shoal__pool_spec_check(s->worker_pool, depth + 1, false) : SHOAL_OK;
}

int shoal__pool_spec_copy(shoal_pool_t *p, const shoal_pool_spec_t *spec)
{
    p->spec = *spec;
    p->spec.max_size = shoal__pool_max_of(spec);
    snprintf(p->name, sizeof p->name, "%s", spec->name ? spec->name : "pool");
    p->spec.name = p->name;
    return shoal__pool_copy_nested(p, spec);
}

int shoal__pool_copy_nested(shoal_pool_t *p, const shoal_pool_spec_t *spec)
{
    size_t depth = 0;
    for (const shoal_pool_spec_t *s = spec->worker_pool; s != NULL; s = s->worker_pool)
        depth++;
    if (depth == 0)
        return SHOAL_OK;
    /* Without memory, the chain the pool has stands (a swap's commit then
     * fails, and aborts its swap: swap.c): p->spec.worker_pool points into it. */
    nested_spec_t *n = calloc(depth, sizeof *n);
    if (n == NULL)
        return SHOAL_ENOMEM;
    free(p->nested); /* a swap's new chain replaces the old (spawns copy it) */
    const shoal_pool_spec_t *s = spec->worker_pool;
    for (size_t i = 0; i < depth; i++, s = s->worker_pool) {
        n[i].spec = *s;
        snprintf(n[i].name, sizeof n[i].name, "%s", s->name ? s->name : "pool");
        n[i].spec.name = n[i].name;
        n[i].spec.worker_pool = i + 1 < depth ? &n[i + 1].spec : NULL;
    }
    p->nested = (shoal_pool_spec_t *)(void *)n;
    p->spec.worker_pool = &n[0].spec;
    return SHOAL_OK;
}
