/* qsbr.c - grace periods for records read without a lock; see qsbr.h. */
#include "runtime/qsbr.h"

#include <pthread.h>
#include <stdlib.h>

#include "runtime/runtime.h"

/* Calls fn for every thread cache of rt: workers, then other threads (under
 * tc_lock: a thread that exits frees its cache). */
static void each_tcache(shoal_runtime_t *rt, void (*fn)(shoal_tcache_t *, void *), void *arg)
{
    for (unsigned i = 0; i < rt->nslots; i++) /* compensating slots too */
        fn(shoal__worker_tcache(rt, i), arg);
    pthread_mutex_lock(&rt->tc_lock);
    for (shoal_tcache_t *tc = rt->foreign; tc != NULL; tc = tc->next)
        fn(tc, arg);
    pthread_mutex_unlock(&rt->tc_lock);
}

struct take {
    shoal_qsbr_snap_t *snap;
    size_t cap;
    bool oom;
};

static void take_one(shoal_tcache_t *tc, void *arg)
{
    struct take *t = arg;
    /* seq_cst: the reclaimer's load of the Dekker pair (qsbr.h). */
    uint64_t qs = atomic_load_explicit(&tc->qs, memory_order_seq_cst);
    if ((qs & 1) == 0 || t->oom)
        return;
    if (t->snap->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        shoal_tcache_t **tcs = realloc(t->snap->tcs, cap * sizeof *tcs);
        if (tcs != NULL)
            t->snap->tcs = tcs;
        uint64_t *v = tcs ? realloc(t->snap->qs, cap * sizeof *v) : NULL;
        if (v == NULL) {
            t->oom = true;
            return;
        }
        t->snap->qs = v;
        t->cap = cap;
    }
    t->snap->tcs[t->snap->n] = tc;
    t->snap->qs[t->snap->n++] = qs;
}

int shoal__qsbr_snapshot(shoal_runtime_t *rt, shoal_qsbr_snap_t *snap)
{
    *snap = (shoal_qsbr_snap_t){0};
    struct take t = {.snap = snap};
    each_tcache(rt, take_one, &t);
    if (t.oom) {
        shoal__qsbr_snap_free(snap);
        return SHOAL_ENOMEM;
    }
    return SHOAL_OK;
}

struct check {
    const shoal_qsbr_snap_t *snap;
    bool waiting;
};

static void check_one(shoal_tcache_t *tc, void *arg)
{
    struct check *c = arg;
    for (size_t i = 0; i < c->snap->n; i++) {
        /* acquire: pairs with qsbr_exit's release: the reads are done. A
         * cache freed since the snapshot is not found here (its thread
         * exited, outside any region); one allocated at the same address
         * only makes us wait longer. */
        if (c->snap->tcs[i] == tc &&
            atomic_load_explicit(&tc->qs, memory_order_acquire) == c->snap->qs[i])
            c->waiting = true;
    }
}

bool shoal__qsbr_passed(shoal_runtime_t *rt, const shoal_qsbr_snap_t *snap)
{
    if (snap->n == 0)
        return true;
    struct check c = {.snap = snap, .waiting = false};
    each_tcache(rt, check_one, &c);
    return !c.waiting;
}

void shoal__qsbr_snap_free(shoal_qsbr_snap_t *snap)
{
    free(snap->tcs);
    free(snap->qs);
    *snap = (shoal_qsbr_snap_t){0};
}

void shoal__qsbr_retire(shoal_runtime_t *rt, shoal_qsbr_retired_t *r)
{
    /* Without memory for the snapshot now, a later collect takes it: a
     * later snapshot only waits for more. */
    r->snap_pending = shoal__qsbr_snapshot(rt, &r->snap) != SHOAL_OK;
    pthread_mutex_lock(&rt->limbo_lock);
    r->next = rt->limbo;
    rt->limbo = r;
    pthread_mutex_unlock(&rt->limbo_lock);
    shoal__qsbr_collect(rt, false);
}

void shoal__qsbr_collect(shoal_runtime_t *rt, bool all)
{
    shoal_qsbr_retired_t *done = NULL;
    pthread_mutex_lock(&rt->limbo_lock);
    for (shoal_qsbr_retired_t **pp = &rt->limbo; *pp != NULL;) {
        shoal_qsbr_retired_t *r = *pp;
        if (!all && r->snap_pending)
            r->snap_pending = shoal__qsbr_snapshot(rt, &r->snap) != SHOAL_OK;
        if (all || (!r->snap_pending && shoal__qsbr_passed(rt, &r->snap))) {
            *pp = r->next;
            r->next = done;
            done = r;
        } else {
            pp = &r->next;
        }
    }
    pthread_mutex_unlock(&rt->limbo_lock);
    while (done != NULL) {
        shoal_qsbr_retired_t *next = done->next;
        shoal__qsbr_snap_free(&done->snap);
        done->free(done);
        done = next;
    }
}
