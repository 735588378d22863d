/* elastic.c - elastic pools (shoal/pool.h): a worker idle past
 * idle_timeout ends, down to min_size; a send that finds every worker full
 * while fewer than max_size run has one started for it (lazy grow);
 * max_waiting bounds who waits for room; and the tick the pool's actor
 * runs for these and for autoscale (autoscale.c). Everything but the
 * senders' side of lazy grow runs in the pool actor's turns.
 *
 * THE GROW LIST (a forward pool's lazy grow)
 *   claim     a sender whose every offer was refused, in a lazy pool, claims
 *             room in workers still to be started: grow_msgs + 1, by a CAS
 *             that keeps the live workers it saw + ceil(grow_msgs /
 *             lazy_mailbox) <= lazy_max [relaxed: a count that publishes
 *             nothing; the envelope goes through the list]. A sender that
 *             saw an older, smaller live count may claim one more than
 *             there will be workers for: that send is placed over a
 *             worker's limit, never lost (the pool's actor, below).
 *   push      it links the envelope in front of grow_head [CAS, seq_cst:
 *             release for the envelope's contents, and the sender's store
 *             of the end pair below] and, if the list was empty, sends the
 *             pool's actor SHOAL__POOL_TICK_GROW (priority). That send may
 *             fail (no envelope for it: SHOAL_ENOMEM); the sender does not
 *             retry it (see lost tick).
 *   take      the pool's actor takes the whole list [exchange, seq_cst:
 *             acquires the pushes], in the order sent, and places each:
 *             on a worker with room; else on a worker it starts for it
 *             (while fewer than max_size); else over a worker's limit
 *             (orphans.c), or -- no worker live, none could be started --
 *             held with the orphans, and a worker is tried again at each
 *             tick until one starts. Then grow_msgs - what it took. A
 *             drain ends only once grow_msgs is 0: what a sender claimed
 *             before the drain closed the pool is handled (a sweeper,
 *             orphans.c, one for all the list held), not dropped.
 *   the drain the pool's actor, draining, stores grow_shut [seq_cst]; each
 *             look at grow_msgs after it [seq_cst load] decides whether the
 *             drain may end. A sender, after its claim [seq_cst CAS],
 *             loads grow_shut [seq_cst]: set, it undoes its claim, tells
 *             the actor (SHOAL__POOL_TICK_GROW: it looks again) and the
 *             send is refused (SHOAL_ENOPROC). Store-buffering on
 *             (grow_msgs, grow_shut): either the actor's look sees the
 *             claim (the drain waits for the push that follows) or the
 *             sender sees the drain (nothing is pushed). Before, a sender
 *             past the pool's open check could claim after the drain's
 *             last look: SHOAL_OK, then dropped at the pool's end.
 *   the end   the pool's actor, ending, stores grow_closed [seq_cst] and
 *             then takes the list and drops what it holds (counted, calls
 *             answered). A sender, after its push, loads grow_closed
 *             [seq_cst]: store-buffering on (grow_head, grow_closed),
 *             either the actor's take sees the push or the sender sees the
 *             close and takes the list itself (takes are exchanges: each
 *             envelope is taken once).
 *   lost tick a sender's SHOAL__POOL_TICK_GROW that could not be sent
 *             would leave its send -- and every send pushed after it: the
 *             list is not empty, they tell nobody -- on the list for good,
 *             and a drain waiting for them. So the pool's own tick (a lazy
 *             pool ticks: idle_timeout) looks as that message would have:
 *             it takes the list if it holds any [relaxed load: only whether
 *             to look; the take is the exchange]. Draining, the tick looks
 *             each time until the pool ends (a claim undone with its tick
 *             lost leaves grow_msgs 0 with nobody to look), and a pool
 *             that stopped ticking (SET_ELASTIC) ticks on while grow_msgs
 *             is not 0. A pull pool's ask (shoal__pool_lazy_ask) is
 *             cleared and its buffer counted at each tick too. A lost tick
 *             delays the sends by one tick (5 ms .. 250 ms), no more; the
 *             send path pays nothing for it.
 *
 * IDLE EXPIRY
 *   A forward pool's worker is idle when it is IDLE, has nothing queued,
 *   and its dequeue count has not moved since the pool's actor last looked
 *   (`seen`, per slot: the pid, the count, since when); a pull pool's
 *   member when its seat says it waits (pull.h: seats). Idle past
 *   idle_timeout, and more than min_size live: it leaves the FIFO and
 *   retires (workers.c) -- a send that raced the check is handled before it
 *   ends -- and the target follows. The tick looks every quarter of
 *   idle_timeout (5 ms .. 250 ms), so a worker ends within 1.25 x of it.
 */
#include "pool/elastic.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actor/call.h"
#include "actor/room.h"
#include "actor/send.h"
#include "runtime/runtime.h"

/* ---- settings ------------------------------------------------------------- */

static bool is_elastic(const shoal_pool_elastic_t *el)
{
    return el->idle_timeout_ms != 0 || el->max_waiting != 0 || el->autoscale.when != 0;
}

int shoal__pool_elastic_check(const shoal_pool_spec_t *spec, const shoal_pool_elastic_t *el,
                              bool remote)
{
    if (!is_elastic(el))
        return SHOAL_OK;
    if (spec->worker_pool != NULL || remote)
        return SHOAL_ENOTSUP; /* a pool of pools sizes its level; an isolated pool its child */
    const shoal_pool_autoscale_t *a = &el->autoscale;
    if (el->idle_timeout_ms > UINT64_MAX / 1000000u)
        return SHOAL_EINVAL;
    if (a->when == 0)
        return SHOAL_OK;
    if ((a->when &
         ~(uint32_t)(SHOAL_AUTOSCALE_BUSY | SHOAL_AUTOSCALE_WAIT | SHOAL_AUTOSCALE_REFUSED)) != 0 ||
        a->up_step == 0 || a->down_step == 0 || a->up_busy > 1000 || a->down_busy >= a->up_busy ||
        a->down_wait_us >= a->up_wait_us || a->down_refused > a->up_refused ||
        a->up_for_ms > UINT64_MAX / 1000000u || a->down_idle_ms > UINT64_MAX / 1000000u ||
        a->cooldown_ms > UINT64_MAX / 1000000u)
        return SHOAL_EINVAL;
    return SHOAL_OK;
}

static shoal_pool_elastic_t elastic_of(const shoal_pool_spec_t *s)
{
    return (shoal_pool_elastic_t){s->idle_timeout_ms, s->max_waiting, s->autoscale};
}

/* The tick's period: a quarter of idle_timeout (5 ms .. 250 ms), and at most
 * SHOAL_AUTOSCALE_TICK_MS while autoscaling. */
static uint64_t tick_ms(const shoal_pool_t *p)
{
    uint64_t ms = SHOAL_AUTOSCALE_TICK_MS;
    if (p->spec.idle_timeout_ms != 0) {
        uint64_t q = p->spec.idle_timeout_ms / 4;
        q = q < 5 ? 5 : q;
        ms = q < ms ? q : ms;
    }
    return ms;
}

static bool ticks(const shoal_pool_t *p)
{
    return p->spec.idle_timeout_ms != 0 || p->spec.autoscale.when != 0;
}

void shoal__pool_elastic_free(struct shoal_elastic_s *el)
{
    if (el == NULL)
        return;
    free(el->seen);
    free(el);
}

int shoal__pool_set_elastic(struct shoal_ctx_s *ctx, shoal_pool_t *p,
                            const shoal_pool_elastic_t *el)
{
    int rc = shoal__pool_elastic_check(&p->spec, el, p->remote != NULL);
    if (rc != SHOAL_OK)
        return rc;
    if (p->el == NULL && is_elastic(el)) {
        struct shoal_elastic_s *e = calloc(1, sizeof *e);
        shoal_seen_t *seen = calloc(p->cap, sizeof *seen);
        if (e == NULL || seen == NULL) {
            free(e);
            free(seen);
            return SHOAL_ENOMEM;
        }
        e->seen = seen;
        p->el = e;
    }
    bool was_scaling = p->spec.autoscale.when != 0;
    p->spec.idle_timeout_ms = el->idle_timeout_ms;
    p->spec.max_waiting = el->max_waiting;
    p->spec.autoscale = el->autoscale;
    /* relaxed: senders read each as a value on its own (pool.h). */
    atomic_store_explicit(&p->lazy, el->idle_timeout_ms != 0, memory_order_relaxed);
    atomic_store_explicit(&p->lazy_max, p->spec.max_size, memory_order_relaxed);
    atomic_store_explicit(&p->lazy_mailbox,
                          p->spec.mailbox == SHOAL_MAILBOX_UNBOUNDED ? 0 : p->spec.mailbox,
                          memory_order_relaxed);
    atomic_store_explicit(&p->max_waiting, el->max_waiting, memory_order_relaxed);
    atomic_store_explicit(&p->g.timed, el->autoscale.when != 0, memory_order_relaxed);
    if (el->autoscale.when != 0 && !was_scaling && p->el != NULL) {
        p->el->as = (shoal_autoscale_state_t){0}; /* readings start afresh */
    }
    if (ticks(p))
        shoal__pool_schedule(ctx, p, tick_ms(p), SHOAL__POOL_TICK_ELASTIC, &p->tick_pending);
    return SHOAL_OK;
}

int shoal__pool_set_bounds(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint32_t min, uint32_t max)
{
    if (p->remote != NULL)
        return SHOAL_ENOTSUP; /* its child's pool has the workers */
    if (min > max || max == 0 || max > p->cap)
        return SHOAL_EINVAL;
    if (p->state == SHOAL_POOL_DRAINING)
        return 0;
    p->spec.min_size = min;
    p->spec.max_size = max;
    atomic_store_explicit(&p->lazy_max, max, memory_order_relaxed);
    uint32_t was = p->target, size = was < min ? min : was > max ? max : was;
    uint32_t now = shoal__pool_resize(ctx, p, size);
    if (now != was)
        shoal__pool_resized_by_hand(p); /* a change of size: autoscale's cooldown */
    return (int)now;
}

/* ---- max_waiting ----------------------------------------------------------- */

int shoal__pool_room_add(shoal_runtime_t *rt, shoal_pool_t *p, shoal_pid_t waiter)
{
    int rc = shoal__room_add(rt, p->g.pid, waiter,
                             atomic_load_explicit(&p->max_waiting, memory_order_relaxed));
    if (rc == SHOAL_EOVERLOAD)
        atomic_fetch_add_explicit(&p->waits_refused, 1, memory_order_relaxed);
    return rc;
}

uint32_t shoal__pool_waiting(shoal_pool_t *p)
{
    if (p->pull != NULL)
        return shoal__pull_waiting(p->rt, p);
    if (p->remote != NULL)
        return 0;
    size_t n = shoal__room_count(p->rt, p->g.pid);
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* ---- lazy grow: the grow list ----------------------------------------------- */

/* Drops envelopes off the list (the pool has ended): counted, calls
 * answered with SHOAL_ENOPROC. */
static void drop_list(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p, shoal_env_t *e)
{
    uint64_t k = 0;
    while (e != NULL) {
        shoal_env_t *next =
            shoal__env_of(atomic_load_explicit(&e->node.next, memory_order_relaxed));
        if (shoal__env_kind(e) == SHOAL_MSG_CALL) {
            struct shoal_reply_s reply = {.tc = tc, .env = NULL, .status = SHOAL_ENOPROC};
            shoal__reply_send(rt, tc, p->g.pid, e->from, shoal__env_ref(e), &reply);
        }
        SHOAL_STAT_ADD(tc, msgs_dropped, 1);
        shoal__pool_count_dropped(tc, p);
        shoal__env_free(tc, e);
        e = next;
        k++;
    }
    atomic_fetch_sub_explicit(&p->grow_msgs, k, memory_order_relaxed);
}

void shoal__pool_grow_sweep(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p)
{
    /* seq_cst: the end's store, then its take (the end pair). */
    atomic_store_explicit(&p->grow_closed, 1, memory_order_seq_cst);
    drop_list(rt, tc, p, atomic_exchange_explicit(&p->grow_head, NULL, memory_order_seq_cst));
}

int shoal__pool_lazy_take(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p, shoal_env_t *e,
                          uint32_t n)
{
    uint32_t mb = atomic_load_explicit(&p->lazy_mailbox, memory_order_relaxed);
    uint32_t max = atomic_load_explicit(&p->lazy_max, memory_order_relaxed);
    if (mb == 0 || n >= max)
        return SHOAL_EBUSY;
    uint64_t g = atomic_load_explicit(&p->grow_msgs, memory_order_relaxed);
    do {
        if ((uint64_t)n + (g + mb) / mb > max) /* ceil((g + 1) / mb) workers */
            return SHOAL_EBUSY;
        /* seq_cst: the claim, the sender's store of the drain pair (see
         * THE GROW LIST). */
    } while (!atomic_compare_exchange_weak_explicit(&p->grow_msgs, &g, g + 1, memory_order_seq_cst,
                                                    memory_order_relaxed));
    /* seq_cst: the sender's load of the drain pair. */
    if (atomic_load_explicit(&p->grow_shut, memory_order_seq_cst)) {
        /* relaxed: the tick below orders it before the actor's look (or,
         * lost, the pool's next ticks: see lost tick). */
        atomic_fetch_sub_explicit(&p->grow_msgs, 1, memory_order_relaxed);
        shoal__send(rt, tc, SHOAL_PID_NONE, p->g.pid, SHOAL__POOL_TICK_GROW, NULL, 0, true, NULL,
                    NULL);
        return SHOAL_ENOPROC;
    }
    e->meta |= SHOAL_ENV_POOLED;
    shoal__pool_stamp(e); /* its wait includes the start of its worker */
    shoal_env_t *head = atomic_load_explicit(&p->grow_head, memory_order_relaxed);
    do {
        atomic_store_explicit(&e->node.next, head ? &head->node : NULL, memory_order_relaxed);
        /* seq_cst: the push (see THE GROW LIST). */
    } while (!atomic_compare_exchange_weak_explicit(&p->grow_head, &head, e, memory_order_seq_cst,
                                                    memory_order_relaxed));
    /* The list was empty: the pool's actor is told once (a send that fails
     * is not retried: its tick looks, see THE GROW LIST: lost tick). */
    if (head == NULL)
        shoal__send(rt, tc, SHOAL_PID_NONE, p->g.pid, SHOAL__POOL_TICK_GROW, NULL, 0, true, NULL,
                    NULL);
    /* seq_cst: the sender's load of the end pair. */
    if (atomic_load_explicit(&p->grow_closed, memory_order_seq_cst))
        drop_list(rt, tc, p, atomic_exchange_explicit(&p->grow_head, NULL, memory_order_seq_cst));
    return SHOAL_OK;
}

void shoal__pool_lazy_ask(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p)
{
    /* seq_cst: the sender's load of the ask pair, after its claim of the
     * item's cell [seq_cst] (shoal__pull_put): the pool's actor clears the
     * flag [seq_cst] before it counts the buffer [seq_cst] (on_grow), so
     * it sees the item, or we see the flag clear and ask again. */
    if (atomic_load_explicit(&p->grow_asked, memory_order_seq_cst) ||
        atomic_exchange_explicit(&p->grow_asked, 1, memory_order_seq_cst))
        return;
    /* Lost (no envelope), the flag stays set until the pool's tick clears
     * it and counts the buffer (see THE GROW LIST: lost tick). */
    shoal__send(rt, tc, SHOAL_PID_NONE, p->g.pid, SHOAL__POOL_TICK_GROW, NULL, 0, true, NULL, NULL);
}

/* Starts one worker for lazy grow: its pid, or SHOAL_PID_NONE. quiet: a
 * tick's retry (its first failure was logged). */
static shoal_pid_t grow_one(struct shoal_ctx_s *ctx, shoal_pool_t *p, bool quiet)
{
    if (p->state != SHOAL_POOL_RUNNING || shoal__pool_live(p) >= p->spec.max_size ||
        atomic_load_explicit(&ctx->rt->stopping, memory_order_relaxed))
        return SHOAL_PID_NONE;
    shoal_pid_t pid;
    int rc = shoal__pool_spawn_worker(ctx, p, &p->spec, &p->hold, false, &pid);
    if (rc != SHOAL_OK) {
        if (!quiet)
            shoal__log(ctx->rt, SHOAL_LOG_ERROR, ctx->self, p->name,
                       "cannot start a worker for a send (lazy grow): %s", shoal_strerror(rc));
        return SHOAL_PID_NONE;
    }
    shoal__pool_table_append(p, pid);
    if (p->target < shoal__pool_live(p))
        p->target = shoal__pool_live(p);
    p->lazy_grown++;
    return pid;
}

/* A pull pool: items wait beyond what its live members can still take
 * (prefetch each, less what they hold) -- a member started for each
 * prefetch of them, up to max_size, as each send that found no member
 * free asked (lazy grow). A member just started holds nothing yet: it
 * counts as taking its share, so a second look does not start it again.
 * A recent picture: a tick looks again. */
static void pull_grow(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    if (!atomic_load_explicit(&p->lazy, memory_order_relaxed))
        return;
    /* seq_cst (the counts): the actor's load of the ask pair
     * (shoal__pool_lazy_ask), after its clear of grow_asked [seq_cst] in
     * on_grow; the buffer's count is also the second read of pull.h's
     * wake-up pair. */
    shoal_pull_t *q = p->pull;
    uint64_t pf = atomic_load_explicit(&q->prefetch, memory_order_relaxed);
    uint64_t queued = shoal__inject_count(&q->queue, memory_order_seq_cst);
    uint64_t admitted = shoal__pull_admitted(q, memory_order_seq_cst);
    uint64_t held = admitted > queued ? admitted - queued : 0;
    uint64_t can = (uint64_t)shoal__pool_live(p) * pf;
    uint64_t room = can > held ? can - held : 0;
    while (queued > room && grow_one(ctx, p, false) != SHOAL_PID_NONE)
        room += pf;
}

/* Places one send from the grow list (see THE GROW LIST: take). */
static void place_grown(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_env_t *e,
                        shoal_pid_t *fresh)
{
    if (*fresh != SHOAL_PID_NONE && shoal__deliver(ctx->rt, ctx->tc, *fresh, e, false) == SHOAL_OK)
        return;
    uint32_t n = shoal__pool_live(p);
    for (uint32_t i = 0; i < n; i++)
        if (shoal__deliver(ctx->rt, ctx->tc, shoal__pool_slot(p, i), e, false) == SHOAL_OK)
            return;
    *fresh = grow_one(ctx, p, false);
    if (*fresh != SHOAL_PID_NONE && shoal__deliver(ctx->rt, ctx->tc, *fresh, e, false) == SHOAL_OK)
        return;
    shoal__pool_hold_placed(ctx, p, e); /* over a limit, or for the next worker */
}

/* A forward pool holding sends with no worker live: the start that failed
 * for them (place_grown) is tried again (see THE GROW LIST: take). */
static void forward_regrow(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    if (p->orphans.head != NULL && shoal__pool_live(p) == 0 &&
        grow_one(ctx, p, true) != SHOAL_PID_NONE)
        shoal__pool_place_orphans(ctx, p);
}

void shoal__pool_on_grow(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    if (p->pull != NULL) {
        /* seq_cst: the actor's store of the ask pair, cleared before we
         * look (shoal__pool_lazy_ask). */
        atomic_store_explicit(&p->grow_asked, 0, memory_order_seq_cst);
        pull_grow(ctx, p);
        return;
    }
    /* seq_cst: the take (see THE GROW LIST). */
    shoal_env_t *e = atomic_exchange_explicit(&p->grow_head, NULL, memory_order_seq_cst);
    shoal_env_t *fifo = NULL; /* the list is newest first */
    uint64_t k = 0;
    while (e != NULL) {
        shoal_env_t *next =
            shoal__env_of(atomic_load_explicit(&e->node.next, memory_order_relaxed));
        atomic_store_explicit(&e->node.next, fifo ? &fifo->node : NULL, memory_order_relaxed);
        fifo = e;
        e = next;
        k++;
    }
    shoal_pid_t fresh = SHOAL_PID_NONE;
    /* Draining, no worker is started for them: held, and placed together
     * (one sweeper for all, orphans.c; placed one by one, each started a
     * sweeper of its own, past max_size and the restart budget). */
    bool draining = p->state == SHOAL_POOL_DRAINING;
    while (fifo != NULL) {
        shoal_env_t *next =
            shoal__env_of(atomic_load_explicit(&fifo->node.next, memory_order_relaxed));
        if (draining)
            shoal__pool_hold(p, fifo);
        else
            place_grown(ctx, p, fifo, &fresh);
        fifo = next;
    }
    if (draining && k != 0)
        shoal__pool_place_orphans(ctx, p);
    atomic_fetch_sub_explicit(&p->grow_msgs, k, memory_order_relaxed);
    shoal__pool_drain_finish(ctx, p); /* a drain that waited for them */
}

/* ---- idle expiry ------------------------------------------------------------- */

/* Retires the worker in slot i (idle past idle_timeout). */
static void expire_at(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint32_t i)
{
    shoal_pid_t pid = shoal__pool_slot(p, i);
    uint32_t last = shoal__pool_live(p) - 1;
    if (p->el != NULL)
        p->el->seen[i] = p->el->seen[last]; /* the last worker moves into slot i */
    shoal__pool_table_remove_at(p, i);
    shoal__pool_retire_worker(ctx, p, pid);
    if (p->target > shoal__pool_live(p))
        p->target = shoal__pool_live(p);
    p->expired++;
}

static void expire_forward(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t now, uint64_t limit)
{
    shoal_runtime_t *rt = ctx->rt;
    shoal_seen_t *seen = p->el->seen;
    for (uint32_t i = 0; i < shoal__pool_live(p);) {
        shoal_pid_t pid = shoal__pool_slot(p, i);
        shoal_actor_t *a = shoal__actor_at(rt, shoal__pid_slot(pid));
        /* relaxed: a recent picture; a send that races the retirement is
         * handled before the worker ends (workers.c: retiring). */
        uint64_t w = atomic_load_explicit(&a->user_rsv, memory_order_relaxed);
        uint32_t deq =
            atomic_load_explicit(&shoal__actor_back(rt, a)->user_deq, memory_order_relaxed);
        bool idle = shoal__rsv_gen(w) == shoal__pid_gen(pid) &&
                    atomic_load_explicit(&a->sched, memory_order_relaxed) == SHOAL_SCHED_IDLE &&
                    shoal__rsv_depth(w, deq) == 0;
        if (seen[i].pid != pid || seen[i].deq != deq || !idle) {
            seen[i] = (shoal_seen_t){pid, deq, now};
            i++;
            continue;
        }
        if (now - seen[i].since >= limit && shoal__pool_live(p) > p->spec.min_size) {
            expire_at(ctx, p, i); /* slot i holds another worker now */
            continue;
        }
        i++;
    }
}

static void expire_pull(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t now, uint64_t limit)
{
    shoal_pid_t idle[64]; /* 64 a tick at most */
    size_t n = shoal__pull_idle_past(p, now, limit, idle, 64);
    for (size_t k = 0; k < n && shoal__pool_live(p) > p->spec.min_size; k++) {
        for (uint32_t i = 0; i < shoal__pool_live(p); i++) {
            if (shoal__pool_slot(p, i) == idle[k]) {
                expire_at(ctx, p, i);
                break;
            }
        }
    }
}

/* The tick's idle expiry, of either kind. */
static void expire(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t now)
{
    uint64_t limit = shoal__ms_to_ns(p->spec.idle_timeout_ms);
    if (p->pull != NULL)
        expire_pull(ctx, p, now, limit);
    else
        expire_forward(ctx, p, now, limit);
}

/* ---- the tick ------------------------------------------------------------------ */

/* What a sender's SHOAL__POOL_TICK_GROW asks, looked at again (see THE
 * GROW LIST: lost tick). lazy: the pool runs and grows lazily. */
static void grow_look(struct shoal_ctx_s *ctx, shoal_pool_t *p, bool lazy)
{
    if (p->pull != NULL) {
        if (lazy)
            shoal__pool_on_grow(ctx, p); /* items left with no member waiting, an ask lost */
        return;
    }
    /* relaxed: only whether to look; on_grow's exchange takes the list. */
    if (p->state == SHOAL_POOL_DRAINING ||
        atomic_load_explicit(&p->grow_head, memory_order_relaxed) != NULL)
        shoal__pool_on_grow(ctx, p);
}

/* Whether the tick comes again: while the pool ticks, and while a forward
 * pool's grow list may need a look (see THE GROW LIST: lost tick). */
static bool tick_again(shoal_pool_t *p, bool running)
{
    if (running)
        return true;
    if (p->pull != NULL)
        return false;
    /* relaxed: a count read for itself (whether sends are still claimed). */
    return p->state == SHOAL_POOL_DRAINING ||
           atomic_load_explicit(&p->grow_msgs, memory_order_relaxed) != 0;
}

void shoal__pool_on_elastic_tick(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    p->tick_pending = false;
    bool running = p->el != NULL && ticks(p) && p->state != SHOAL_POOL_DRAINING;
    bool lazy = running && p->spec.idle_timeout_ms != 0;
    uint64_t now = shoal__now_ns();
    if (lazy)
        expire(ctx, p, now);
    grow_look(ctx, p, lazy);
    if (lazy && p->pull == NULL)
        forward_regrow(ctx, p);
    if (running && p->spec.autoscale.when != 0)
        shoal__autoscale_tick(ctx, p, now);
    if (tick_again(p, running))
        shoal__pool_schedule(ctx, p, tick_ms(p), SHOAL__POOL_TICK_ELASTIC, &p->tick_pending);
}

int shoal__pool_elastic_start(struct shoal_ctx_s *ctx, shoal_pool_t *p, char *why, size_t why_size)
{
    shoal_pool_elastic_t el = elastic_of(&p->spec);
    int rc = is_elastic(&el) ? shoal__pool_set_elastic(ctx, p, &el) : SHOAL_OK;
    if (rc != SHOAL_OK) /* (its settings were checked with the spec: no memory) */
        snprintf(why, why_size, "elastic state for up to %" PRIu32 " workers: %s", p->cap,
                 shoal_strerror(rc));
    return rc;
}
