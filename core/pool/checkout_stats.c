/* checkout_stats.c - what other threads read of a checkout pool
 * (checkout.h): the words its lock's holders publish as they let go, its
 * fields of the pool's stats (from those words, or from one moment under
 * the lock) and of an inspection. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool/checkout.h"
#include "pool/checkout_members.h"
#include "pool/pool.h"
#include "runtime/runtime.h"
#include "runtime/tcache.h"
#include "sched/worker.h"
#include "shoal/inspect.h"

shoal_co_stripe_t *shoal__co_stripe(shoal_checkout_t *co, bool *shared)
{
    return shoal__co_stripe_of(co, shoal__tcache_get(co->pool->rt), shared);
}

/* Stores v into a published word if it differs: a word that did not
 * change stays in the readers' caches. */
static inline void publish(_Atomic uint32_t *w, uint32_t v)
{
    if (atomic_load_explicit(w, memory_order_relaxed) != v)
        atomic_store_explicit(w, v, memory_order_relaxed);
}

void shoal__co_check_holder(shoal_checkout_t *co)
{
    if (co->held && pthread_equal(co->holder, pthread_self()))
        return;
    shoal__log(co->pool->rt, SHOAL_LOG_ERROR, co->pool->g.pid, co->pool->name,
               "checkout counter written without the pool's lock");
    abort();
}

void shoal__co_owner_fault(shoal_checkout_t *co, uint32_t i, shoal_pid_t owner)
{
    const shoal_co_seat_t *s = &co->seats[i];
    shoal__log(co->pool->rt, SHOAL_LOG_ERROR, co->pool->g.pid, co->pool->name,
               "checkout member %" PRIu32 ".%" PRIu32 " given to %" PRIu32 ".%" PRIu32
               " while %s (held by %" PRIu32 ".%" PRIu32 ")",
               shoal__pid_slot(s->pid), shoal__pid_gen(s->pid), shoal__pid_slot(owner),
               shoal__pid_gen(owner), s->state == SHOAL_CO_IN_USE ? "in use" : "not free",
               shoal__pid_slot(s->owner), shoal__pid_gen(s->owner));
    abort();
}

void shoal__co_unlock(shoal_pool_t *p)
{
    shoal__co_publish_locked(p);
    p->co->held = false;
    shoal__unlock(&p->co->lock);
}

void shoal__checkout_publish(shoal_pool_t *p)
{
    shoal__co_lock(p->co);
    shoal__co_unlock(p);
}

void shoal__co_publish_locked(shoal_pool_t *p)
{
    shoal_checkout_t *co = p->co;
    char why[200];
    if (p->rt->debug_checks && !shoal__co_consistent(co, why, sizeof why)) {
        shoal__log(p->rt, SHOAL_LOG_ERROR, p->g.pid, p->name, "checkout seats inconsistent: %s",
                   why);
        abort();
    }
    publish(&co->pub_in_use, co->nin_use);
    publish(&co->pub_free, co->nfree);
    publish(&co->pub_starting, co->nstarting);
    publish(&co->pub_queued, co->qlive);
    publish(&co->pub_ending, co->nending);
}

void shoal__checkout_stats_now(shoal_pool_t *p, shoal_pool_stats_t *st)
{
    shoal_checkout_t *co = p->co;
    shoal__co_lock(co);
    shoal__co_publish_locked(p);
    shoal__checkout_stats(p, st);
    st->pool_size = shoal__co_live(co);
    co->held = false;
    shoal__unlock(&co->lock);
}

void shoal__checkout_stats(shoal_pool_t *p, shoal_pool_stats_t *st)
{
    shoal_checkout_t *co = p->co;
    st->kind = SHOAL_POOL_KIND_CHECKOUT;
    st->in_use = atomic_load_explicit(&co->pub_in_use, memory_order_relaxed);
    st->free = atomic_load_explicit(&co->pub_free, memory_order_relaxed);
    st->starting = atomic_load_explicit(&co->pub_starting, memory_order_relaxed);
    st->queued = atomic_load_explicit(&co->pub_queued, memory_order_relaxed);
    st->pool_size = st->in_use + st->free + st->starting;
    st->running = st->in_use;
    st->idle = st->free;
    uint64_t c[SHOAL_CO_NCOUNTS] = {0}, early = 0;
    uint64_t h[SHOAL_HIST_BUCKETS] = {0};
    for (uint32_t s = 0; s < co->nstripes; s++) {
        const shoal_co_stripe_t *x = &co->stripes[s];
        for (unsigned i = 0; i < SHOAL_CO_NCOUNTS; i++)
            c[i] += atomic_load_explicit(&x->counts[i], memory_order_relaxed);
        early += atomic_load_explicit(&x->no_members_early, memory_order_relaxed);
        for (unsigned i = 0; i < SHOAL_HIST_BUCKETS; i++)
            h[i] += atomic_load_explicit(&x->wait[i], memory_order_relaxed);
    }
    st->takes = c[SHOAL_CO_TAKES];
    st->returned_ok = c[SHOAL_CO_RETURNED_OK];
    st->returned_fail = c[SHOAL_CO_RETURNED_FAIL];
    st->error_no_members = c[SHOAL_CO_NO_MEMBERS] + early;
    st->take_timeouts = c[SHOAL_CO_TAKE_TIMEOUTS];
    st->killed_free = c[SHOAL_CO_KILLED_FREE];
    st->killed_in_use = c[SHOAL_CO_KILLED_IN_USE];
    st->lease_expired = c[SHOAL_CO_LEASE_EXPIRED];
    st->culled = c[SHOAL_CO_CULLED];
    st->recycled = c[SHOAL_CO_RECYCLED];
    st->start_failures = c[SHOAL_CO_START_FAILURES];
    st->take_wait_ns[0] = shoal__hist_percentile(h, 500);
    st->take_wait_ns[1] = shoal__hist_percentile(h, 990);
}

void shoal__checkout_inspect(shoal_pool_t *p, const shoal_pool_stats_t *st, shoal_inspect_t *out)
{
    shoal_checkout_t *co = p->co;
    shoal_inspect_uint(out, "init", p->spec.size);
    shoal_inspect_uint(out, "max", p->spec.max_size);
    if (co->cfg->group != NULL)
        shoal_inspect_str(out, "group", co->cfg->group);
    shoal_inspect_uint(out, "in_use", st->in_use);
    shoal_inspect_uint(out, "free", st->free);
    shoal_inspect_uint(out, "starting", st->starting);
    /* Stopped, not yet ended (an init past its deadline may run on): they
     * count against max. */
    shoal_inspect_uint(out, "ending", atomic_load_explicit(&co->pub_ending, memory_order_relaxed));
    shoal_inspect_uint(out, "queued", st->queued);
    shoal_inspect_uint(out, "queue_max", co->cfg->queue_max);
    shoal_inspect_uint(out, "takes", st->takes);
    shoal_inspect_uint(out, "returned_ok", st->returned_ok);
    shoal_inspect_uint(out, "returned_fail", st->returned_fail);
    shoal_inspect_uint(out, "error_no_members", st->error_no_members);
    shoal_inspect_uint(out, "take_timeouts", st->take_timeouts);
    shoal_inspect_uint(out, "killed_free", st->killed_free);
    shoal_inspect_uint(out, "killed_in_use", st->killed_in_use);
    shoal_inspect_uint(out, "lease_expired", st->lease_expired);
    shoal_inspect_uint(out, "culled", st->culled);
    shoal_inspect_uint(out, "recycled", st->recycled);
    shoal_inspect_uint(out, "start_failures", st->start_failures);
    /* Takes waiting when it began to drain (checkout.h: draining): not in
     * the stats' struct, read here [relaxed: a count on its own]. */
    uint64_t shut = 0;
    for (uint32_t s = 0; s < co->nstripes; s++)
        shut += atomic_load_explicit(&co->stripes[s].counts[SHOAL_CO_TAKE_SHUTDOWNS],
                                     memory_order_relaxed);
    shoal_inspect_uint(out, "take_shutdowns", shut);
    shoal_inspect_uint(out, "take_wait_p50_ns", st->take_wait_ns[0]);
    shoal_inspect_uint(out, "take_wait_p99_ns", st->take_wait_ns[1]);
}
