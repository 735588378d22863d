/* record.c - pool records: allocation, references, and the limbo where an
 * ended pool's record waits out its grace period (runtime/qsbr.h).
 */
#include "pool/pool.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

shoal_pool_t *shoal__pool_record_new(shoal_runtime_t *rt, uint32_t cap,
                                     shoal_pool_stripe_t *stripes, uint32_t nstripes)
{
    shoal__pool_limbo_collect(rt, false); /* records of pools that ended since */
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
    p->rt = rt;
    return p;
}

static void record_free(shoal_pool_t *p)
{
    shoal__qsbr_snap_free(&p->snap);
    free(p->nested);
    free(p->restart_at);
    free(p->retiring_pids);
    free(p->waiters);
    free(p->slots);
    if (!p->stripes_external)
        free(p->stripes);
    shoal__remote_free(p->remote); /* its supervisor has stopped (pool.c) */
    free(p);
}

void shoal__pool_record_retire(shoal_runtime_t *rt, shoal_pool_t *p)
{
    /* The pool's actor cleared its front's pointer [seq_cst] before its
     * reference went, and the acq_rel on refs orders that before this
     * snapshot's loads: a region that could have found p is in it (qsbr.h).
     * Without memory for the snapshot now, a later collect takes it: a later
     * snapshot only waits for more. */
    p->snap_pending = shoal__qsbr_snapshot(rt, &p->snap) != SHOAL_OK;
    pthread_mutex_lock(&rt->pool_lock);
    p->limbo_next = rt->pool_limbo;
    rt->pool_limbo = p;
    pthread_mutex_unlock(&rt->pool_lock);
    shoal__pool_limbo_collect(rt, false);
}

void shoal__pool_limbo_collect(shoal_runtime_t *rt, bool all)
{
    shoal_pool_t *done = NULL;
    pthread_mutex_lock(&rt->pool_lock);
    for (shoal_pool_t **pp = &rt->pool_limbo; *pp != NULL;) {
        shoal_pool_t *p = *pp;
        if (!all && p->snap_pending)
            p->snap_pending = shoal__qsbr_snapshot(rt, &p->snap) != SHOAL_OK;
        if (all || (!p->snap_pending && shoal__qsbr_passed(rt, &p->snap))) {
            *pp = p->limbo_next;
            p->limbo_next = done;
            done = p;
        } else {
            pp = &p->limbo_next;
        }
    }
    pthread_mutex_unlock(&rt->pool_lock);
    while (done != NULL) {
        shoal_pool_t *next = done->limbo_next;
        record_free(done);
        done = next;
    }
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
    shoal_pool_t *p = atomic_load_explicit(&a->pool, memory_order_seq_cst);
    if (p != NULL && p->pid != pid)
        p = NULL;
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
        shoal_pool_t *up = p->parent; /* p's reference on its parent goes with it */
        shoal__pool_record_retire(rt, p);
        p = up;
    }
}
