/* record.c - pool records: allocation, references, and the limbo where an
 * ended pool's record waits out its grace period (runtime/qsbr.h).
 */
#include "pool/pool.h"
#include "pool/swap.h"
#include "pool/elastic.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "pool/checkout.h"
#include "runtime/runtime.h"

shoal_pool_t *shoal__pool_record_new(shoal_runtime_t *rt, uint32_t cap,
                                     shoal_pool_stripe_t *stripes, uint32_t nstripes)
{
    shoal__qsbr_collect(rt, false); /* records of pools that ended since */
    shoal_pool_t *p = aligned_alloc(64, sizeof *p);
    if (p == NULL)
        return NULL;
    memset(p, 0, sizeof *p);
    p->nstripes = rt->nslots + 1; /* every worker id, compensating ones too */
    if (stripes != NULL && nstripes < p->nstripes) {
        free(p); /* not enough for every thread of this runtime */
        return NULL;
    }
    p->cap = cap;
    p->slots = calloc(cap, sizeof *p->slots);
    p->stripes_external = stripes != NULL;
    p->stripes = stripes != NULL ? stripes : aligned_alloc(64, p->nstripes * sizeof *p->stripes);
    if (p->slots == NULL || p->stripes == NULL) {
        free(p->slots);
        if (!p->stripes_external)
            free(p->stripes);
        free(p);
        return NULL;
    }
    if (!p->stripes_external)
        memset(p->stripes, 0, p->nstripes * sizeof *p->stripes);
    pthread_mutex_init(&p->offer_lock, NULL);
    p->rt = rt;
    p->g.ops = &shoal__forward_ops; /* until its kind says otherwise */
    p->g.name = p->name;
    p->g.label = p->label;
    return p;
}

static void record_free(shoal_qsbr_retired_t *r)
{
    shoal_pool_t *p = (shoal_pool_t *)(void *)((char *)r - offsetof(shoal_pool_t, retired));
    for (unsigned i = 0; i < SHOAL__POOL_NTICKS; i++)
        shoal__tick_forget(p->rt, &p->ticks[i]); /* off the timer's list before p goes */
    free(p->nested);
    free(p->restart_at);
    free(p->retiring_pids);
    free(p->waiters);
    free(p->slots);
    if (!p->stripes_external)
        free(p->stripes);
    shoal__remote_free(p->remote); /* its supervisor has stopped (pool.c) */
    shoal__pull_free(p->rt, p->pull);
    shoal__checkout_free(p->co);
    shoal__pool_elastic_free(p->el);
    /* A swap offered and never taken is taken back by its asker; one left
     * by an asker that failed to is freed here. */
    shoal__pool_swap_free(p->offer);
    pthread_mutex_destroy(&p->offer_lock);
    free(p);
}

void shoal__pool_record_retire(shoal_runtime_t *rt, shoal_pool_t *p)
{
    /* The pool's actor cleared its front's pointer [seq_cst] before its
     * reference went, and the acq_rel on refs orders that before the
     * snapshot's loads: a region that could have found p is in it (qsbr.h). */
    p->retired.free = record_free;
    shoal__qsbr_retire(rt, &p->retired);
}

shoal_pool_t *shoal__pool_find(shoal_runtime_t *rt, shoal_pid_t pid)
{
    shoal_tcache_t *tc = shoal__tcache_get(rt);
    if (tc == NULL || pid == SHOAL_PID_NONE || shoal__pid_slot(pid) >= rt->max_actors)
        return NULL;
    bool opened = !tc->in_region;
    shoal__qsbr_enter(tc);
    shoal_actor_t *a = shoal__actor_at(rt, shoal__pid_slot(pid));
    /* seq_cst: the reader's load of the Dekker pair in qsbr.h. A record
     * found here is readable until we leave the region. */
    shoal_group_t *g = atomic_load_explicit(&a->group, memory_order_seq_cst);
    shoal_pool_t *p = g != NULL && g->pid == pid ? shoal__pool_of_group(g) : NULL;
    if (p != NULL) {
        /* A reference, unless the last one has gone (then it is in limbo). */
        uint32_t r = atomic_load_explicit(&p->refs, memory_order_relaxed);
        while (r != 0 && !atomic_compare_exchange_weak_explicit(
                             &p->refs, &r, r + 1, memory_order_relaxed, memory_order_relaxed))
            ;
        if (r == 0)
            p = NULL;
    }
    if (opened && tc->worker == NULL)
        shoal__qsbr_exit(tc);
    return p;
}

void shoal__pool_ref(shoal_pool_t *p)
{
    /* relaxed: the caller's own reference keeps p alive (as find's CAS). */
    atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
}

void shoal__pool_unref(shoal_runtime_t *rt, shoal_pool_t *p)
{
    /* acq_rel: the last one out sees every other holder's use of p. */
    while (p != NULL && atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) == 1) {
        shoal_pool_t *up = shoal__pool_parent(p); /* p's reference on its parent goes with it */
        shoal__pool_record_retire(rt, p);
        p = up;
    }
}
