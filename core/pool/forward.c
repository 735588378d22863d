/* forward.c - the sender's side of a pool: choosing a worker on the
 * sender's own thread, and the counts a worker makes for its pool.
 *
 * A send to a pool never waits for the pool's actor. The sender reads the
 * pool's record (pool.h) inside a read-side region (runtime/qsbr.h), starts
 * at its own cursor in the worker FIFO and offers the envelope to each
 * worker once: the first that accepts it keeps it, and the cursor moves past
 * it. A full mailbox (SHOAL_EFULL, or SHOAL_EBUSY from a nested pool) and a
 * worker that is gone or retiring (SHOAL_ENOPROC) both mean "the next one".
 * Each sender thread keeps its own cursor per pool, so senders share no
 * written cache line with each other or with the pool: the only writes are
 * to the chosen worker's mailbox and to the sender's own counter stripe.
 */
#include "pool/pool.h"

#include "actor/send.h"
#include "runtime/runtime.h"
#include "sched/futex.h"

/* One forward in 16 carries its send time (shoal__env_stamp). */
#define SAMPLE_MASK 15u

static shoal_pool_cursor_t *cursor_of(shoal_tcache_t *tc, const shoal_pool_t *p)
{
    shoal_pool_cursor_t *c = &tc->cursors[((uintptr_t)p >> 6) & (SHOAL_POOL_CURSORS - 1)];
    if (c->pool != p) {
        c->pool = p;
        c->next = 0;
    }
    return c;
}

/* Offers e to one worker: into a plain actor's user mailbox (within its
 * limit), or on through a nested pool. A sampled message gets its send time
 * only once a mailbox has room for it (before the push makes it visible). */
static int offer(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t to, shoal_env_t *e,
                 bool sample)
{
    uint32_t slot = shoal__pid_slot(to);
    if (slot >= rt->max_actors)
        return SHOAL_ENOPROC;
    shoal_actor_t *a = shoal__actor_at(rt, slot);
    if (atomic_load_explicit(&a->kind, memory_order_relaxed) == SHOAL_ACTOR_POOL)
        return shoal__deliver(rt, tc, to, e, false);
    /* A stale PLAIN (the slot is a pool now) is harmless: the reservation
     * checks the generation, and a pool places what lands in its own
     * mailbox (actor.c). */
    uint32_t limit = atomic_load_explicit(&a->limit, memory_order_relaxed);
    int rc = limit == 0 ? shoal__queued_admit(rt, tc) : SHOAL_OK;
    if (rc == SHOAL_OK)
        rc = shoal__rsv_reserve(&a->user_rsv, shoal__pid_gen(to), limit,
                                &shoal__actor_back(rt, a)->user_deq);
    if (rc != SHOAL_OK)
        return rc;
    if (limit == 0)
        shoal__queued_in(tc, e);
    if (sample && !(shoal__env_flags(e) & SHOAL_ENV_STAMP)) {
        uint64_t *stamp = shoal__env_stamp(e);
        if (stamp != NULL) {
            *stamp = shoal__now_ns();
            e->meta |= SHOAL_ENV_STAMP;
        }
    }
    e->meta |= SHOAL_ENV_POOLED;
    shoal__mq_push(&a->user_tail, &e->node);
    shoal__schedule(rt, tc, a);
    return SHOAL_OK;
}

int shoal__pool_forward(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_actor_t *pa, shoal_pid_t to,
                        shoal_env_t *e)
{
    bool opened = !tc->in_region;
    shoal__qsbr_enter(tc);
    int rc = SHOAL_ENOPROC;
    /* acquire: pairs with the release stores of spawn (actor.c): the record
     * a live generation points at is set up. */
    uint64_t w = atomic_load_explicit(&pa->user_rsv, memory_order_acquire);
    /* seq_cst: the reader's load of the Dekker pair in qsbr.h (it also
     * acquires: the record is initialised before it is published). It may
     * be a later pool's on this slot (then its pid differs) or one that
     * ended (in limbo, still readable inside our region). */
    shoal_pool_t *p = atomic_load_explicit(&pa->pool, memory_order_seq_cst);
    if (shoal__rsv_gen(w) != shoal__pid_gen(to) || !shoal__rsv_alive(w))
        goto out;
    /* The caller read the kind before it knew the generation: check it now
     * that the acquire above has shown us that generation's spawn. */
    if (atomic_load_explicit(&pa->kind, memory_order_relaxed) != SHOAL_ACTOR_POOL) {
        rc = SHOAL__NOT_POOL;
        goto out;
    }
    if (p == NULL || p->pid != to)
        goto out;
    bool shared;
    shoal_pool_stripe_t *st = shoal__pool_stripe(p, tc, &shared);
    if (p->remote != NULL) { /* into its child process's ring (remote.c) */
        rc = shoal__remote_forward(p->remote, tc, e);
        shoal__stripe_add(rc == SHOAL_OK ? &st->forwarded : &st->unhandled, 1, shared);
        goto out;
    }
    /* acquire: pairs with the pool actor's release stores of slots then n. */
    uint32_t n = atomic_load_explicit(&p->nworkers, memory_order_acquire);
    if (n != 0) {
        bool sample = (++tc->pool_sample & SAMPLE_MASK) == 0;
        shoal_pool_cursor_t *c = cursor_of(tc, p);
        uint32_t i = c->next < n ? c->next : c->next % n;
        for (uint32_t k = 0; k < n; k++) {
            /* acquire: see nworkers. */
            shoal_pid_t wp = atomic_load_explicit(&p->slots[i], memory_order_acquire);
            if (++i == n)
                i = 0;
            if (offer(rt, tc, wp, e, sample) == SHOAL_OK) {
                c->next = i;
                shoal__stripe_add(&st->forwarded, 1, shared);
                rc = SHOAL_OK;
                goto out;
            }
        }
    }
    shoal__stripe_add(&st->unhandled, 1, shared);
    rc = SHOAL_EBUSY;
out:
    /* A worker thread stays in its region until the end of its turn. */
    if (opened && tc->worker == NULL)
        shoal__qsbr_exit(tc);
    return rc;
}

void shoal__pool_count(shoal_tcache_t *tc, shoal_pool_t *p, bool failed, uint64_t wait_ns,
                       uint64_t service_ns, bool sampled)
{
    unsigned wb = sampled ? shoal__hist_bucket(wait_ns) : 0;
    unsigned sb = sampled ? shoal__hist_bucket(service_ns) : 0;
    /* The worker holds a reference on its pool's record, each record one on
     * its parent's (pool.c). */
    for (; p != NULL; p = p->parent) {
        bool shared;
        shoal_pool_stripe_t *st = shoal__pool_stripe(p, tc, &shared);
        shoal__stripe_add(failed ? &st->failed : &st->handled, 1, shared);
        if (!sampled)
            continue;
        shoal__stripe_add(&st->samples, 1, shared);
        shoal__stripe_add(&st->wait_sum, wait_ns, shared);
        shoal__stripe_add(&st->service_sum, service_ns, shared);
        if (shared) {
            atomic_fetch_add_explicit(&st->wait[wb], 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&st->service[sb], 1, memory_order_relaxed);
        } else {
            atomic_store_explicit(&st->wait[wb],
                                  atomic_load_explicit(&st->wait[wb], memory_order_relaxed) + 1,
                                  memory_order_relaxed);
            atomic_store_explicit(&st->service[sb],
                                  atomic_load_explicit(&st->service[sb], memory_order_relaxed) + 1,
                                  memory_order_relaxed);
        }
    }
}

void shoal__pool_count_handled(shoal_tcache_t *tc, shoal_pool_t *p, uint64_t n)
{
    for (; p != NULL; p = p->parent) {
        /* release: after the worker's pop count (published first, actor.c):
         * a reader that acquires this sees those messages off the queue. A
         * worker thread writes only its own stripe. */
        shoal_pool_stripe_t *st = &p->stripes[tc->worker->id];
        atomic_store_explicit(&st->handled,
                              atomic_load_explicit(&st->handled, memory_order_relaxed) + n,
                              memory_order_release);
    }
}

void shoal__pool_count_dropped(shoal_tcache_t *tc, shoal_pool_t *p)
{
    for (; p != NULL; p = p->parent) {
        bool shared;
        shoal_pool_stripe_t *st = shoal__pool_stripe(p, tc, &shared);
        shoal__stripe_add(&st->dropped, 1, shared);
    }
}

bool shoal__pool_hand_back(struct shoal_ctx_s *ctx, shoal_pool_t *counted, shoal_pid_t to,
                           shoal_env_t *e)
{
    if (to != SHOAL_PID_NONE && !atomic_load_explicit(&ctx->rt->stopping, memory_order_relaxed)) {
        shoal_env_t *m = shoal__env_move(ctx->tc, e);
        if (m != NULL) {
            m->meta |= SHOAL_ENV_HANDBACK;
            if (shoal__deliver(ctx->rt, ctx->tc, to, m, true) == SHOAL_OK)
                return true;
            /* The pool is gone: the message stays ours to dead-letter. */
            e->from = m->from;
            e->meta = m->meta & ~(uint64_t)SHOAL_ENV_HANDBACK;
            e->type = m->type;
            e->size = m->size;
            e->payload = m->payload;
            m->meta &= ~(uint64_t)SHOAL_ENV_HEAP;
            shoal__env_free(ctx->tc, m);
        }
    }
    shoal__pool_count_dropped(ctx->tc, counted);
    return false;
}
