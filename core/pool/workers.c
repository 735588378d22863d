/* workers.c - a pool's FIFO of workers, kept by the pool's own actor:
 * starting workers, the table senders read (pool.h: publication order),
 * retiring removed ones, restarts with their budget and the degraded state,
 * resizing, draining, and what a worker's end means.
 *
 * Workers are the pool's children. A worker's end arrives as
 * SHOAL_MSG_EXIT:
 *   - a worker still in the FIFO died: it is replaced in its slot, unless
 *     the restart budget is spent; then the slot is closed up and the pool
 *     is degraded until a retry (timer, with backoff) fills it again;
 *   - a retiring worker finished its mailbox: it is forgotten;
 *   - anything else is a child of the manager behaviour: passed on.
 * Everything here runs in the pool actor's turns.
 */
#include "pool/pool.h"
#include "pool/swap.h"

#include <inttypes.h>
#include <stdlib.h>

#include "actor/call.h"
#include "actor/room.h"
#include "actor/send.h"
#include "pool/checkout.h"
#include "pool/checkout_members.h"
#include "runtime/grow.h"
#include "runtime/runtime.h"
#include "sched/futex.h"

static void drain_finish_if_done(struct shoal_ctx_s *ctx, shoal_pool_t *p);

int shoal__pool_spawn_worker(struct shoal_ctx_s *ctx, shoal_pool_t *p,
                             const shoal_pool_spec_t *spec, const shoal_pool_hold_t *hold,
                             bool notify, shoal_pid_t *pid)
{
    if (spec->worker_pool == NULL) {
        /* A pull pool's member counts into a seat of its own (pull.h). */
        uint64_t words[SHOAL_MEMBER_WORDS] = {0};
        shoal_pull_seat_t *seat = NULL;
        if (p->pull != NULL && (seat = shoal__pull_seat_new(p, words)) == NULL)
            return SHOAL_ENOMEM;
        int rc =
            shoal__pool_spawn_member(ctx, p, spec, hold, notify, seat != NULL ? words : NULL, pid);
        if (seat != NULL)
            shoal__pull_seat_bind(p, seat, rc == SHOAL_OK ? *pid : SHOAL_PID_NONE);
        return rc;
    }
    /* Room to track it first, as for a member: a nested pool spawned and
     * then found untrackable was stopped, but it had started its own
     * workers and run their inits meanwhile. */
    if (shoal__children_reserve(ctx) != SHOAL_OK)
        return SHOAL_ENOMEM;
    bool held = hold != NULL && hold->acquire != NULL;
    /* The new pool's reference on p (it passes to the new pool). */
    atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
    int rc = shoal__pool_spawn(ctx->rt, ctx->tc, ctx->self, p, spec->worker_pool,
                               held ? hold : NULL, p->depth + 1, notify, pid);
    if (rc != SHOAL_OK) {
        atomic_fetch_sub_explicit(&p->refs, 1, memory_order_relaxed); /* ours is still held */
        return rc;
    }
    return shoal__children_add(ctx, *pid); /* (room taken above: SHOAL_OK) */
}

int shoal__pool_spawn_member(struct shoal_ctx_s *ctx, shoal_pool_t *p,
                             const shoal_pool_spec_t *spec, const shoal_pool_hold_t *hold,
                             bool notify, const uint64_t *words, shoal_pid_t *pid)
{
    /* Room to track it first: a member spawned and then found untrackable
     * was stopped, but it ran meanwhile, its words pointing at what the
     * caller then freed (a pull pool's seat: shoal__pool_spawn_worker).
     * So a failure here means no member was spawned. */
    if (shoal__children_reserve(ctx) != SHOAL_OK)
        return SHOAL_ENOMEM;
    bool held = hold != NULL && hold->acquire != NULL;
    /* The new worker's reference on p (it passes to the worker). */
    atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
    shoal_actor_hold_t ah = {held ? hold->release : NULL, held ? hold->what : NULL,
                             held ? hold->origin : NULL};
    if (held)
        hold->acquire(hold->what);
    shoal_spawn_t s = {
        .parent = ctx->self,
        .beh = spec->worker,
        .args = spec->worker_args,
        .limit = p->spec.mailbox, /* the pool's current limit, not the spec's at start */
        .kind = SHOAL_ACTOR_PLAIN,
        .hold = held ? &ah : NULL,
        .member_of = &p->g,
        .member_words = words,
        .notify_start = notify,
        .sends = p->count_sends ? &p->sends : NULL,
        /* What a reload starts handles nothing before it commits: opened
         * at SHOAL__POOL_GO (pool.c: shoal__pool_go), or at the swap's
         * COMMIT (swap.c). */
        .gated = p->held || p->staging,
    };
    int rc = shoal__actor_spawn_as(ctx->rt, ctx->tc, &s, pid);
    if (rc != SHOAL_OK) {
        if (held)
            hold->release(hold->what);
        atomic_fetch_sub_explicit(&p->refs, 1, memory_order_relaxed); /* ours is still held */
        return rc;
    }
    return shoal__children_add(ctx, *pid); /* (room taken above: SHOAL_OK) */
}

void shoal__pool_open_worker(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pid_t pid)
{
    if (p->spec.worker_pool != NULL) /* a nested pool, held as it was spawned */
        shoal_send_priority(ctx, pid, SHOAL__POOL_GO, NULL, 0);
    else
        shoal__send_system(ctx->rt, ctx->tc, pid, SHOAL_ENV_OPEN, ctx->self, 0);
}

/* ---- the worker table (pool.h: publication order) ------------------------ */

void shoal__pool_slot_set(shoal_pool_t *p, uint32_t i, shoal_pid_t pid)
{
    /* release: a sender that reads this PID sees the worker spawned. */
    atomic_store_explicit(&p->slots[i], pid, memory_order_release);
    if (p->pull != NULL && i < shoal__pool_live(p)) /* replaced in place */
        shoal__pull_listed(p, pid);
}

void shoal__pool_table_append(shoal_pool_t *p, shoal_pid_t pid)
{
    uint32_t n = shoal__pool_live(p);
    shoal__pool_slot_set(p, n, pid);
    /* release: pairs with the sender's acquire of nworkers: slots[n] is set. */
    atomic_store_explicit(&p->nworkers, n + 1, memory_order_release);
    if (p->pull != NULL)
        shoal__pull_listed(p, pid);
}

void shoal__pool_table_remove_at(shoal_pool_t *p, uint32_t i)
{
    uint32_t n = shoal__pool_live(p);
    shoal__pool_slot_set(p, i, shoal__pool_slot(p, n - 1));
    /* release: as in table_append (a sender that still sees n reads the
     * last PID twice, harmlessly). */
    atomic_store_explicit(&p->nworkers, n - 1, memory_order_release);
}

static bool table_find(shoal_pool_t *p, shoal_pid_t pid, uint32_t *at)
{
    uint32_t n = shoal__pool_live(p);
    for (uint32_t i = 0; i < n; i++) {
        if (shoal__pool_slot(p, i) == pid) {
            *at = i;
            return true;
        }
    }
    return false;
}

/* ---- retiring ------------------------------------------------------------ */

/* Closes a worker's user mailbox (with the generation checked, so a stale
 * PID touches nothing): from now on sends to it answer SHOAL_ENOPROC, and
 * its final count is fixed (mailbox.h). */
static void close_mailbox(shoal_runtime_t *rt, shoal_pid_t pid)
{
    shoal_actor_t *a = shoal__actor_at(rt, shoal__pid_slot(pid));
    uint64_t w = atomic_load_explicit(&a->user_rsv, memory_order_relaxed);
    while (shoal__rsv_gen(w) == shoal__pid_gen(pid) && shoal__rsv_alive(w)) {
        /* acq_rel: as shoal__rsv_close. */
        if (atomic_compare_exchange_weak_explicit(&a->user_rsv, &w, w & ~SHOAL_RSV_ALIVE,
                                                  memory_order_acq_rel, memory_order_relaxed))
            break;
    }
}

static int retiring_add(shoal_pool_t *p, shoal_pid_t pid)
{
    shoal_pid_t *n = shoal__grow(p->retiring_pids, p->nretiring, &p->retiring_cap, sizeof *n, 8);
    if (n == NULL)
        return SHOAL_ENOMEM;
    p->retiring_pids = n;
    p->retiring_pids[p->nretiring++] = pid;
    return SHOAL_OK;
}

static bool retiring_remove(shoal_pool_t *p, shoal_pid_t pid)
{
    for (uint32_t i = 0; i < p->nretiring; i++) {
        if (p->retiring_pids[i] == pid) {
            p->retiring_pids[i] = p->retiring_pids[--p->nretiring];
            return true;
        }
    }
    return false;
}

/* The worker (already out of the FIFO) gets nothing new, finishes its
 * mailbox and ends; its EXIT then finds it in retiring_pids. */
void shoal__pool_retire_worker(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pid_t pid)
{
    if (retiring_add(p, pid) != SHOAL_OK) {
        /* Cannot track it: stop it instead; its queue comes back to us. */
        shoal__send_system(ctx->rt, ctx->tc, pid, SHOAL_ENV_STOP, ctx->self, (uint32_t)SHOAL_OK);
        return;
    }
    close_mailbox(ctx->rt, pid);
    shoal__send_system(ctx->rt, ctx->tc, pid, SHOAL_ENV_RETIRE, ctx->self, 0);
}

/* ---- restarts ------------------------------------------------------------ */

bool shoal__pool_restart_allowed(shoal_pool_t *p, uint64_t now)
{
    uint64_t within = shoal__ms_to_ns(p->spec.restart.within_ms);
    uint32_t recent = 0;
    for (uint32_t i = 0; i < p->restart_n; i++)
        if (now - p->restart_at[i] < within)
            recent++;
    return recent < p->spec.restart.max;
}

void shoal__pool_restart_note(shoal_pool_t *p, uint64_t now)
{
    uint32_t ring = p->spec.restart.max ? p->spec.restart.max : 1;
    p->restart_at[p->restart_head] = now;
    p->restart_head = (p->restart_head + 1) % ring;
    if (p->restart_n < ring)
        p->restart_n++;
}

static const char *const tick_names[SHOAL__POOL_NTICKS] = {"retry", "check", "drain", "elastic",
                                                           "checkout"};

void shoal__pool_tick_armed(shoal_runtime_t *rt, shoal_pool_t *p, unsigned at, int rc)
{
    uint32_t bit = 1u << at;
    if (rc != SHOAL_OK &&
        !(atomic_fetch_or_explicit(&p->ticks_owed, bit, memory_order_relaxed) & bit))
        shoal__log(rt, SHOAL_LOG_WARN, p->g.pid, p->name,
                   "could not arm its %s tick (%s): owed, the timer thread sends it once "
                   "memory allows",
                   tick_names[at], shoal_strerror(rc));
}

void shoal__pool_tick_came(shoal_runtime_t *rt, shoal_pool_t *p, unsigned at)
{
    uint32_t bit = 1u << at;
    if (atomic_load_explicit(&p->ticks_owed, memory_order_relaxed) & bit &&
        atomic_fetch_and_explicit(&p->ticks_owed, ~bit, memory_order_relaxed) & bit)
        shoal__log(rt, SHOAL_LOG_INFO, p->g.pid, p->name, "its %s tick has come: running again",
                   tick_names[at]);
}

unsigned shoal__pool_tick_at(uint32_t tick)
{
    return tick == SHOAL__POOL_TICK_RETRY   ? SHOAL__POOL_TICK_AT_RETRY
           : tick == SHOAL__POOL_TICK_CHECK ? SHOAL__POOL_TICK_AT_CHECK
           : tick == SHOAL__POOL_TICK_DRAIN ? SHOAL__POOL_TICK_AT_DRAIN
                                            : SHOAL__POOL_TICK_AT_ELASTIC;
}

void shoal__pool_schedule(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t ms, uint32_t tick,
                          bool *pending)
{
    if (*pending)
        return;
    unsigned at = shoal__pool_tick_at(tick);
    shoal_timer_t t;
    int rc = shoal__tick_arm(ctx->rt, ctx->tc, &p->ticks[at], ctx->self, ms, tick, &t);
    shoal__pool_tick_armed(ctx->rt, p, at, rc);
    *pending = true; /* armed, or owed: it comes either way */
}

static void degrade(struct shoal_ctx_s *ctx, shoal_pool_t *p, int reason)
{
    if (p->state == SHOAL_POOL_RUNNING) {
        p->state = SHOAL_POOL_DEGRADED;
        shoal__log(ctx->rt, SHOAL_LOG_WARN, ctx->self, p->name,
                   "degraded: more than %" PRIu32 " restarts within %" PRIu64
                   " ms (last: %s); serving with %" PRIu32 " of %" PRIu32
                   " workers, retrying in %" PRIu64 " ms",
                   p->spec.restart.max, p->spec.restart.within_ms, shoal_strerror(reason),
                   shoal__pool_live(p), p->target, p->backoff_ms);
    }
    shoal__pool_schedule(ctx, p, p->backoff_ms, SHOAL__POOL_TICK_RETRY, &p->retry_pending);
}

uint32_t shoal__pool_running(const shoal_pool_t *p)
{
    if (p->remote != NULL)
        return p->remote_up ? p->target : 0;
    return shoal__pool_live((shoal_pool_t *)p);
}

void shoal__pool_remote_down(struct shoal_ctx_s *ctx, shoal_pool_t *p, int reason)
{
    if (atomic_load_explicit(&ctx->rt->stopping, memory_order_relaxed) ||
        p->state == SHOAL_POOL_DRAINING)
        return;
    uint64_t now = shoal__now_ns();
    p->last_death_ns = now;
    if (p->state == SHOAL_POOL_RUNNING && shoal__pool_restart_allowed(p, now)) {
        shoal__pool_restart_note(p, now);
        p->restarts++;
        shoal__remote_restart(p->remote);
        return;
    }
    degrade(ctx, p, reason); /* on_retry starts it again, with backoff */
}

void shoal__pool_fill(struct shoal_ctx_s *ctx, shoal_pool_t *p, bool count_restarts)
{
    uint64_t now = shoal__now_ns();
    if (p->remote != NULL) { /* its child's pool has the workers */
        if (!p->remote_up) {
            if (count_restarts) {
                shoal__pool_restart_note(p, now);
                p->restarts++;
            }
            shoal__remote_restart(p->remote);
        }
        return;
    }
    while (shoal__pool_live(p) < p->target) {
        shoal_pid_t pid;
        int rc = shoal__pool_spawn_worker(ctx, p, &p->spec, &p->hold, false, &pid);
        if (rc != SHOAL_OK) {
            shoal__log(ctx->rt, SHOAL_LOG_ERROR, ctx->self, p->name, "cannot start a worker: %s",
                       shoal_strerror(rc));
            degrade(ctx, p, rc);
            break;
        }
        shoal__pool_table_append(p, pid);
        if (count_restarts) {
            shoal__pool_restart_note(p, now);
            p->restarts++;
        }
    }
    shoal__pool_place_orphans(ctx, p);
}

void shoal__pool_on_retry(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    p->retry_pending = false;
    if (p->state == SHOAL_POOL_DRAINING) { /* orphans waiting for a sweeper */
        shoal__pool_place_orphans(ctx, p);
        drain_finish_if_done(ctx, p);
        return;
    }
    if (p->state != SHOAL_POOL_DEGRADED)
        return;
    uint64_t max = p->spec.restart.backoff_ms * SHOAL__POOL_BACKOFF_GROWTH;
    p->backoff_ms = p->backoff_ms * 2 < max ? p->backoff_ms * 2 : max;
    shoal__pool_fill(ctx, p, true);
    shoal__pool_schedule(ctx, p, p->spec.restart.within_ms, SHOAL__POOL_TICK_CHECK,
                         &p->check_pending);
}

void shoal__pool_on_check(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    p->check_pending = false;
    if (p->state != SHOAL_POOL_DEGRADED)
        return;
    uint64_t within = shoal__ms_to_ns(p->spec.restart.within_ms);
    if (shoal__now_ns() - p->last_death_ns < within || shoal__pool_running(p) < p->target) {
        shoal__pool_schedule(ctx, p, p->spec.restart.within_ms, SHOAL__POOL_TICK_CHECK,
                             &p->check_pending);
        return;
    }
    p->state = SHOAL_POOL_RUNNING;
    p->backoff_ms = p->spec.restart.backoff_ms;
    shoal__log(ctx->rt, SHOAL_LOG_INFO, ctx->self, p->name,
               "recovered: %" PRIu32 " workers, no restart for %" PRIu64 " ms",
               shoal__pool_running(p), p->spec.restart.within_ms);
}

/* ---- draining ------------------------------------------------------------ */

void shoal__pool_drain_finish(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    drain_finish_if_done(ctx, p);
}

static void drain_finish_if_done(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    /* grow_msgs: sends accepted for a worker still to start (elastic.c: the
     * grow list); their tick comes, and they are handled like orphans. */
    if (p->state != SHOAL_POOL_DRAINING || p->nretiring != 0 || shoal__pool_live(p) != 0 ||
        p->orphans.head != NULL || (p->remote != NULL && !p->remote_done) ||
        /* seq_cst: the actor's load of the drain pair (elastic.c). */
        atomic_load_explicit(&p->grow_msgs, memory_order_seq_cst) != 0)
        return;
    for (uint32_t i = 0; i < p->nwaiters; i++)
        shoal_reply(ctx, p->waiters[i].from, p->waiters[i].ref, 0, NULL, 0);
    p->nwaiters = 0;
    shoal_exit(ctx, SHOAL_OK);
}

void shoal__pool_drain(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    if (p->co != NULL) { /* a checkout pool waits for its members' returns */
        shoal__checkout_drain(ctx, p);
        return;
    }
    if (p->state == SHOAL_POOL_DRAINING)
        return;
    shoal__pool_swap_abort(ctx, p, 0); /* a swap being prepared is off */
    shoal__pool_place_orphans(ctx, p); /* while workers are still open */
    p->state = SHOAL_POOL_DRAINING;
    shoal__rsv_close(&ctx->a->user_rsv); /* senders now get SHOAL_ENOPROC */
    /* seq_cst: the actor's store of the drain pair (elastic.c: THE GROW
     * LIST): a sender past the check above claims no more. */
    atomic_store_explicit(&p->grow_shut, 1, memory_order_seq_cst);
    if (p->pull == NULL) /* and who waits for room in it hears so now (room.h) */
        shoal__room_tell(ctx->rt, ctx->tc, p->g.pid, SHOAL_ENOPROC);
    shoal__pull_source_stop(ctx, p); /* no new items from a source either */
    if (p->pull != NULL)
        shoal__pull_close(p); /* nor from a sender that found it open */
    shoal__pool_drain_workers(ctx, p);
}

void shoal__pool_drain_workers(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    /* A pull pool's workers take what its buffer holds first -- one starts
     * for it if none is left (idle expiry took them all: a lazy pool
     * starts none for a send once it drains). */
    p->drain_pending = false;
    if (p->pull != NULL && shoal__pull_draining(ctx, p)) {
        shoal_pid_t fresh;
        if (shoal__pool_live(p) == 0 &&
            shoal__inject_count(&p->pull->queue, memory_order_relaxed) != 0 &&
            !atomic_load_explicit(&ctx->rt->stopping, memory_order_relaxed) &&
            shoal__pool_spawn_worker(ctx, p, &p->spec, &p->hold, false, &fresh) == SHOAL_OK)
            shoal__pool_table_append(p, fresh);
        shoal__pool_schedule(ctx, p, 5, SHOAL__POOL_TICK_DRAIN, &p->drain_pending);
        return;
    }
    uint32_t n = shoal__pool_live(p);
    /* release: as the shrinking stores of resize (pool.h: the worker
     * table); pairs with the senders' acquire load of nworkers. */
    atomic_store_explicit(&p->nworkers, 0, memory_order_release);
    for (uint32_t i = 0; i < n; i++)
        shoal__pool_retire_worker(ctx, p, shoal__pool_slot(p, i));
    p->target = 0;
    if (p->remote != NULL)
        shoal__remote_drain(p->remote); /* its child drains, then says so */
    shoal__pool_place_orphans(ctx, p);
    drain_finish_if_done(ctx, p);
}

void shoal__pool_retire(struct shoal_ctx_s *ctx)
{
    shoal_pool_t *p = shoal__pool_of(ctx->b->state);
    shoal__pool_drain(ctx, p);
    shoal__pool_publish(p);
}

/* ---- resizing ------------------------------------------------------------ */

static uint32_t clamp_size(const shoal_pool_t *p, uint64_t want)
{
    if (want < p->spec.min_size)
        return p->spec.min_size;
    return want > p->spec.max_size ? p->spec.max_size : (uint32_t)want;
}

uint32_t shoal__pool_resize(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t want)
{
    if (p->state == SHOAL_POOL_DRAINING)
        return 0;
    uint32_t size = clamp_size(p, want);
    if (size != p->target)
        p->resizes++;
    if (p->remote != NULL) { /* the child's pool resizes itself */
        p->target = size;
        shoal__remote_control(p->remote, size, p->spec.mailbox);
        return size;
    }
    if (size > p->target) {
        p->target = size;
        shoal__pool_fill(ctx, p, false);
    } else {
        p->target = size;
        while (shoal__pool_live(p) > size) {
            uint32_t n = shoal__pool_live(p);
            shoal_pid_t pid = shoal__pool_slot(p, n - 1);
            /* release: out of the FIFO before its mailbox closes. */
            atomic_store_explicit(&p->nworkers, n - 1, memory_order_release);
            shoal__pool_retire_worker(ctx, p, pid);
        }
    }
    return p->target;
}

int shoal__pool_set_mailbox(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint32_t limit)
{
    if (limit == 0 || (limit > SHOAL_MAILBOX_MAX && limit != SHOAL_MAILBOX_UNBOUNDED))
        return SHOAL_EINVAL;
    p->spec.mailbox = limit;
    /* relaxed: a value on its own (pool.h: elastic pools). */
    atomic_store_explicit(&p->lazy_mailbox, limit == SHOAL_MAILBOX_UNBOUNDED ? 0 : limit,
                          memory_order_relaxed);
    if (p->remote != NULL) {
        shoal__remote_control(p->remote, p->target, limit);
        return SHOAL_OK;
    }
    if (p->spec.worker_pool != NULL)
        return SHOAL_OK; /* nested pools keep their own limits */
    if (p->co != NULL) { /* a checkout pool's members sit in its seats */
        shoal__co_set_limit(ctx, p, limit);
        return SHOAL_OK;
    }
    uint32_t n = shoal__pool_live(p);
    /* Each worker sets its own limit (it cannot end meanwhile, unlike a
     * store from here to a record whose PID may be stale). */
    for (uint32_t i = 0; i < n; i++)
        shoal__send_system(ctx->rt, ctx->tc, shoal__pool_slot(p, i), SHOAL_ENV_LIMIT, ctx->self,
                           limit == SHOAL_MAILBOX_UNBOUNDED ? 0 : limit);
    return SHOAL_OK;
}

/* ---- a worker ended ------------------------------------------------------ */

/* Returns false if pid was not one of ours (the manager's child). */
bool shoal__pool_on_exit(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pid_t pid, int reason)
{
    uint32_t i;
    if (shoal__pool_swap_on_exit(ctx, p, pid))
        return true;
    if (!table_find(p, pid, &i)) {
        if (!retiring_remove(p, pid))
            return false;
        shoal__pool_place_orphans(ctx, p);
        /* A pull pool's retired member that died gave what it held back to
         * the buffer: while draining, a member takes it, then retires. */
        shoal_pid_t fresh;
        if (p->pull != NULL && p->state == SHOAL_POOL_DRAINING && !p->drain_pending &&
            shoal__pull_draining(ctx, p) && shoal__pool_live(p) == 0 &&
            !atomic_load_explicit(&ctx->rt->stopping, memory_order_relaxed) &&
            shoal__pool_spawn_worker(ctx, p, &p->spec, &p->hold, false, &fresh) == SHOAL_OK) {
            shoal__pool_table_append(p, fresh);
            shoal__pool_schedule(ctx, p, 5, SHOAL__POOL_TICK_DRAIN, &p->drain_pending);
            return true;
        }
        drain_finish_if_done(ctx, p);
        return true;
    }
    if (atomic_load_explicit(&ctx->rt->stopping, memory_order_relaxed)) {
        shoal__pool_table_remove_at(p, i); /* the runtime stops: no replacement, no alarm */
        return true;
    }
    uint64_t now = shoal__now_ns();
    p->last_death_ns = now;
    shoal_pid_t fresh;
    int rc = SHOAL_EFAILED;
    /* A pull pool draining its buffer still needs members to take it. */
    bool wanted = p->state == SHOAL_POOL_RUNNING || (p->pull != NULL && p->drain_pending);
    if (wanted && shoal__pool_restart_allowed(p, now) &&
        (rc = shoal__pool_spawn_worker(ctx, p, &p->spec, &p->hold, false, &fresh)) == SHOAL_OK) {
        shoal__pool_slot_set(p, i, fresh); /* the replacement takes the dead one's place */
        shoal__pool_restart_note(p, now);
        p->restarts++;
    } else {
        shoal__pool_table_remove_at(p, i);
        degrade(ctx, p, rc == SHOAL_EFAILED ? reason : rc);
    }
    shoal__pool_place_orphans(ctx, p);
    return true;
}
