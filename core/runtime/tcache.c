/* tcache.c - per-thread caches; see tcache.h. */
#include "runtime/tcache.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

/* The cache this thread last looked up, and for which runtime: a send from
 * a thread outside the dispatcher (a task submitted, shoal_runtime_send)
 * finds it without pthread_getspecific. A runtime is known by tc_id, not
 * its address, which a later runtime may reuse. The entry is this thread's
 * alone; it is cleared wherever the thread's cache for that runtime changes
 * (bind, foreign_exit), and an entry for a runtime destroyed since matches
 * no live one. (initial-exec: a plain load, as fault.c's.) */
static _Thread_local __attribute__((tls_model("initial-exec"))) struct {
    uint64_t id;
    shoal_tcache_t *tc;
} last;

/* Whether this thread is a dispatcher thread (of whichever runtime): set
 * while a worker's own cache is bound (shoal__tcache_bind). This thread's
 * alone. */
static _Thread_local __attribute__((tls_model("initial-exec"))) bool dispatching;

/* Runtime ids: unique values only [relaxed]. 0 is no runtime. */
static _Atomic uint64_t next_id;

/* Caches' serials: unique values only [relaxed]. */
static _Atomic uint64_t next_serial;

static void remember(shoal_runtime_t *rt, shoal_tcache_t *tc)
{
    last.id = tc != NULL ? rt->tc_id : 0;
    last.tc = tc;
}

void shoal__tcache_init(shoal_tcache_t *tc, shoal_runtime_t *rt, struct shoal_worker_s *w)
{
    memset(tc, 0, sizeof *tc);
    tc->rt = rt;
    tc->worker = w;
    tc->serial = atomic_fetch_add_explicit(&next_serial, 1, memory_order_relaxed) + 1;
}

void shoal__tcache_flush(shoal_tcache_t *tc)
{
    shoal__envs_flush(tc);
    shoal__slots_flush(tc);
}

static void add_stats(shoal_tstats_t *into, const shoal_tstats_t *from)
{
#define SHOAL__TSTAT_ADD(name)                                                                     \
    atomic_store_explicit(&into->name,                                                             \
                          atomic_load_explicit(&into->name, memory_order_relaxed) +                \
                              atomic_load_explicit(&from->name, memory_order_relaxed),             \
                          memory_order_relaxed);
    SHOAL_TSTATS_MAP(SHOAL__TSTAT_ADD)
#undef SHOAL__TSTAT_ADD
}

/* pthread key destructor: the thread that owned this cache is exiting. */
static void foreign_exit(void *p)
{
    shoal_tcache_t *tc = p;
    shoal_runtime_t *rt = tc->rt;
    shoal__tcache_flush(tc);
    pthread_mutex_lock(&rt->tc_lock);
    add_stats(&rt->retired, &tc->stats);
    if (tc->prev)
        tc->prev->next = tc->next;
    else
        rt->foreign = tc->next;
    if (tc->next)
        tc->next->prev = tc->prev;
    pthread_mutex_unlock(&rt->tc_lock);
    if (last.tc == tc) /* other keys' destructors may still send */
        remember(rt, NULL);
    free(tc);
}

int shoal__tcache_key_init(shoal_runtime_t *rt)
{
    if (pthread_key_create(&rt->tc_key, foreign_exit) != 0)
        return SHOAL_ENOMEM;
    rt->tc_id = atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed) + 1;
    pthread_mutex_init(&rt->tc_lock, NULL);
    rt->foreign = NULL;
    return SHOAL_OK;
}

void shoal__tcache_key_fini(shoal_runtime_t *rt)
{
    /* Our own thread's cache, if any, is in the list like the others. */
    pthread_setspecific(rt->tc_key, NULL);
    if (last.id == rt->tc_id)
        remember(rt, NULL);
    pthread_key_delete(rt->tc_key);
    shoal_tcache_t *tc = rt->foreign;
    while (tc != NULL) {
        shoal_tcache_t *next = tc->next;
        free(tc);
        tc = next;
    }
    rt->foreign = NULL;
    pthread_mutex_destroy(&rt->tc_lock);
}

shoal_tcache_t *shoal__tcache_new_foreign(shoal_runtime_t *rt)
{
    shoal_tcache_t *tc = malloc(sizeof *tc);
    if (tc == NULL)
        return NULL;
    shoal__tcache_init(tc, rt, NULL);
    pthread_mutex_lock(&rt->tc_lock);
    tc->next = rt->foreign;
    if (rt->foreign)
        rt->foreign->prev = tc;
    rt->foreign = tc;
    pthread_mutex_unlock(&rt->tc_lock);
    return tc;
}

/* shoal__tcache_get when the thread's last look-up was for another
 * runtime, or none: apart, so the hit saves no registers. */
static __attribute__((noinline)) shoal_tcache_t *get_slow(shoal_runtime_t *rt)
{
    shoal_tcache_t *tc = pthread_getspecific(rt->tc_key);
    if (tc != NULL) {
        remember(rt, tc);
        return tc;
    }
    if ((tc = shoal__tcache_new_foreign(rt)) == NULL)
        return NULL;
    if (pthread_setspecific(rt->tc_key, tc) != 0) {
        foreign_exit(tc);
        return NULL;
    }
    remember(rt, tc);
    return tc;
}

shoal_tcache_t *shoal__tcache_get(shoal_runtime_t *rt)
{
    if (__builtin_expect(last.id == rt->tc_id, 1))
        return last.tc;
    return get_slow(rt);
}

void shoal__tcache_bind(shoal_runtime_t *rt, shoal_tcache_t *tc)
{
    pthread_setspecific(rt->tc_key, tc);
    remember(rt, tc);
    dispatching = tc != NULL && tc->worker != NULL;
}

bool shoal__tcache_dispatching(void) { return dispatching; }

void shoal__tcache_sum(shoal_runtime_t *rt, shoal_tstats_t *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&rt->tc_lock);
    add_stats(out, &rt->retired);
    for (shoal_tcache_t *tc = rt->foreign; tc != NULL; tc = tc->next)
        add_stats(out, &tc->stats);
    pthread_mutex_unlock(&rt->tc_lock);
    for (unsigned i = 0; i < rt->nslots; i++) /* compensating slots too */
        add_stats(out, &shoal__worker_tcache(rt, i)->stats);
}
