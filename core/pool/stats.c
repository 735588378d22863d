/* stats.c - what a pool tells about itself: its counters (SHOAL_POOL_STATS)
 * summed over their stripes, the latency histograms' percentiles, the queue
 * depth read from its workers' mailboxes, and its inspection. Runs in the
 * pool actor's turns. */
#include "pool/pool.h"
#include "pool/elastic.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actor/call.h"
#include "pool/checkout.h"
#include "runtime/runtime.h"
#include "sched/monitor.h"
#include "shoal/inspect.h"

/* ---- queue depth and stats ----------------------------------------------- */

/* Its workers, running and idle (shoal/pool.h). A pull pool's from its
 * seats (pull.h); a forward pool's from each worker's schedule word,
 * read as senders read the table (pool.h) -- any thread: the actor table
 * is never freed, and a slot whose generation moved on is not counted. */
static void running_idle(shoal_pool_t *p, shoal_pool_stats_t *st)
{
    if (p->remote != NULL)
        return;
    /* acquire: pairs with the pool actor's release stores of slots then n. */
    uint32_t n = atomic_load_explicit(&p->nworkers, memory_order_acquire);
    if (p->pull != NULL) {
        uint32_t idle = shoal__pull_idle(p);
        st->idle = idle < n ? idle : n;
        st->running = n - st->idle;
        return;
    }
    shoal_runtime_t *rt = p->rt;
    for (uint32_t i = 0; i < n; i++) {
        /* acquire: see nworkers. */
        shoal_pid_t pid = atomic_load_explicit(&p->slots[i], memory_order_acquire);
        if (shoal__pid_slot(pid) >= rt->max_actors)
            continue;
        shoal_actor_t *a = shoal__actor_at(rt, shoal__pid_slot(pid));
        uint64_t w = atomic_load_explicit(&a->user_rsv, memory_order_relaxed);
        if (shoal__rsv_gen(w) != shoal__pid_gen(pid) ||
            atomic_load_explicit(&a->kind, memory_order_relaxed) != SHOAL_ACTOR_PLAIN)
            continue;
        if (atomic_load_explicit(&a->sched, memory_order_relaxed) == SHOAL_SCHED_IDLE)
            st->idle++;
        else
            st->running++;
    }
}

/* An elastic pool's settings and what any thread may read of it
 * (shoal/pool.h: elastic pools); the counters the pool's actor keeps are
 * filled by the caller (its own, or their published copies). */
static void elastic_stats(shoal_pool_t *p, shoal_pool_stats_t *st)
{
    st->waiting = shoal__pool_waiting(p);
    st->max_waiting = atomic_load_explicit(&p->max_waiting, memory_order_relaxed);
    st->waiting_refused = atomic_load_explicit(&p->waits_refused, memory_order_relaxed);
    st->busy = atomic_load_explicit(&p->pub_busy, memory_order_relaxed);
    st->wait_p99_us = atomic_load_explicit(&p->pub_wait_us, memory_order_relaxed);
    st->refused_per_s = atomic_load_explicit(&p->pub_refused_ps, memory_order_relaxed);
    st->idle_timeout_ms = atomic_load_explicit(&p->pub_idle_ms, memory_order_relaxed);
    st->autoscale = atomic_load_explicit(&p->pub_autoscale, memory_order_relaxed);
}

static uint64_t depth_of(shoal_runtime_t *rt, shoal_pid_t pid, unsigned level);

/* Messages held by the pool at front `a` (its workers' and its own). */
static uint64_t pool_depth(shoal_runtime_t *rt, shoal_pool_t *p, unsigned level)
{
    uint64_t d = p->orphans.n;
    uint32_t n = shoal__pool_live(p); /* our own table */
    for (uint32_t i = 0; i < n; i++)
        d += depth_of(rt, shoal__pool_slot(p, i), level + 1);
    return d;
}

static uint64_t depth_of(shoal_runtime_t *rt, shoal_pid_t pid, unsigned level)
{
    shoal_actor_t *a = shoal__actor_at(rt, shoal__pid_slot(pid));
    /* acquire: pairs with spawn's release store (spawn.c) of this word. */
    uint64_t w = atomic_load_explicit(&a->user_rsv, memory_order_acquire);
    if (shoal__rsv_gen(w) != shoal__pid_gen(pid))
        return 0;
    if (atomic_load_explicit(&a->kind, memory_order_relaxed) != SHOAL_ACTOR_GROUP) {
        uint32_t deq =
            atomic_load_explicit(&shoal__actor_back(rt, a)->user_deq, memory_order_relaxed);
        return shoal__rsv_depth(w, deq);
    }
    /* A nested pool: read inside our turn's region (qsbr.h: seq_cst, the
     * reader's load). We count its workers' mailboxes. */
    shoal_group_t *g = atomic_load_explicit(&a->group, memory_order_seq_cst);
    shoal_pool_t *q = g != NULL ? shoal__pool_of_group(g) : NULL;
    if (q == NULL || q->g.pid != pid || level >= SHOAL_POOL_MAX_DEPTH)
        return 0;
    if (q->pull != NULL) /* its buffer and what its members hold */
        return shoal__pull_admitted(q->pull, memory_order_relaxed);
    uint64_t d = 0;
    /* acquire: pair with that pool's release stores, as a sender's do. */
    uint32_t n = atomic_load_explicit(&q->nworkers, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) /* acquire (slots[i]): as nworkers */
        d += depth_of(rt, atomic_load_explicit(&q->slots[i], memory_order_acquire), level + 1);
    return d;
}

void shoal__pool_fill_stats(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pool_stats_t *st)
{
    memset(st, 0, sizeof *st);
    st->size_ = (uint32_t)sizeof *st;
    st->state = p->state;
    st->pool_size = shoal__pool_live(p);
    st->target_size = p->target;
    st->min_size = p->spec.min_size;
    st->max_size = p->spec.max_size;
    st->mailbox = p->spec.mailbox;
    st->retiring = p->nretiring;
    st->worker_restarts = p->restarts;
    st->messages_requeued = p->requeued;
    st->resizes = p->resizes;
    elastic_stats(p, st);
    st->expired = p->expired;
    st->lazy_grown = p->lazy_grown;
    st->autoscale_ups = p->ups;
    st->autoscale_downs = p->downs;
    running_idle(p, st);
    /* The counters first, then the depth: a message counted as handled is
     * no longer seen queued (see shoal__pool_count_handled). */
    shoal__pool_sum(p, st);
    shoal__pull_stats(p, st);
    st->strategy = atomic_load_explicit(&p->strategy, memory_order_relaxed);
    if (p->co != NULL) /* its counts as they are, and its live members beside them */
        shoal__checkout_stats_now(p, st);
    /* In a remote pool's child, in a pull pool's buffer and members, in a
     * checkout pool's queue and members: what was accepted and not yet
     * settled. */
    if (p->remote != NULL || p->pull != NULL || p->co != NULL) {
        uint64_t settled =
            st->messages_handled + st->messages_failed + st->messages_dropped + st->dead_lettered;
        st->queue_depth = st->messages_forwarded > settled ? st->messages_forwarded - settled : 0;
        return;
    }
    shoal__qsbr_enter(ctx->tc);
    st->queue_depth = pool_depth(ctx->rt, p, 0);
    for (uint32_t i = 0; i < p->nretiring; i++)
        st->queue_depth += depth_of(ctx->rt, p->retiring_pids[i], 1);
}

/* ---- read from other threads -------------------------------------------- */

void shoal__pool_publish(shoal_pool_t *p)
{
    atomic_store_explicit(&p->pub_state, p->state, memory_order_relaxed);
    atomic_store_explicit(&p->pub_target, p->target, memory_order_relaxed);
    atomic_store_explicit(&p->pub_retiring, p->nretiring, memory_order_relaxed);
    atomic_store_explicit(&p->pub_mailbox, p->spec.mailbox, memory_order_relaxed);
    atomic_store_explicit(&p->pub_restarts, p->restarts, memory_order_relaxed);
    atomic_store_explicit(&p->pub_resizes, p->resizes, memory_order_relaxed);
    atomic_store_explicit(&p->pub_requeued, p->requeued, memory_order_relaxed);
    atomic_store_explicit(&p->pub_orphans, p->orphans.n, memory_order_relaxed);
    atomic_store_explicit(&p->pub_min, p->spec.min_size, memory_order_relaxed);
    atomic_store_explicit(&p->pub_max, p->spec.max_size, memory_order_relaxed);
    atomic_store_explicit(&p->pub_expired, p->expired, memory_order_relaxed);
    atomic_store_explicit(&p->pub_lazy_grown, p->lazy_grown, memory_order_relaxed);
    atomic_store_explicit(&p->pub_ups, p->ups, memory_order_relaxed);
    atomic_store_explicit(&p->pub_downs, p->downs, memory_order_relaxed);
    atomic_store_explicit(&p->pub_idle_ms, p->spec.idle_timeout_ms, memory_order_relaxed);
    atomic_store_explicit(&p->pub_autoscale, p->spec.autoscale.when, memory_order_relaxed);
    if (p->pull != NULL) /* its capacity follows target (pull.h) */
        shoal__pull_update(p);
    if (p->co != NULL)
        shoal__checkout_publish(p);
}

static bool sum(const shoal_pool_t *p, shoal_pool_stats_t *st, unsigned patience_ms,
                bool latencies);

/* shoal__pool_peek (patience_ms 0: waits for an isolated pool's children's
 * counts) and shoal__pool_peek_within (gives up after patience_ms: false). */
static bool peek(shoal_pool_t *p, shoal_pool_stats_t *st, unsigned patience_ms)
{
    memset(st, 0, sizeof *st);
    st->size_ = (uint32_t)sizeof *st;
    st->state = atomic_load_explicit(&p->pub_state, memory_order_relaxed);
    st->pool_size = atomic_load_explicit(&p->nworkers, memory_order_relaxed);
    st->target_size = atomic_load_explicit(&p->pub_target, memory_order_relaxed);
    st->min_size = atomic_load_explicit(&p->pub_min, memory_order_relaxed);
    st->max_size = atomic_load_explicit(&p->pub_max, memory_order_relaxed);
    st->mailbox = atomic_load_explicit(&p->pub_mailbox, memory_order_relaxed);
    st->retiring = atomic_load_explicit(&p->pub_retiring, memory_order_relaxed);
    st->worker_restarts = atomic_load_explicit(&p->pub_restarts, memory_order_relaxed);
    st->messages_requeued = atomic_load_explicit(&p->pub_requeued, memory_order_relaxed);
    st->resizes = atomic_load_explicit(&p->pub_resizes, memory_order_relaxed);
    elastic_stats(p, st);
    st->expired = atomic_load_explicit(&p->pub_expired, memory_order_relaxed);
    st->lazy_grown = atomic_load_explicit(&p->pub_lazy_grown, memory_order_relaxed);
    st->autoscale_ups = atomic_load_explicit(&p->pub_ups, memory_order_relaxed);
    st->autoscale_downs = atomic_load_explicit(&p->pub_downs, memory_order_relaxed);
    if (!sum(p, st, patience_ms, true))
        return false;
    running_idle(p, st);
    shoal__pull_stats(p, st);
    st->strategy = atomic_load_explicit(&p->strategy, memory_order_relaxed);
    if (p->co != NULL)
        shoal__checkout_stats(p, st);
    /* Summed while traffic flows, a message may show as handled before its
     * forward does: in flight never goes below 0. */
    uint64_t settled =
        st->messages_handled + st->messages_failed + st->messages_dropped + st->dead_lettered;
    st->queue_depth = st->messages_forwarded > settled ? st->messages_forwarded - settled : 0;
    return true;
}

void shoal__pool_peek(shoal_pool_t *p, shoal_pool_stats_t *st) { peek(p, st, 0); }

bool shoal__pool_counts(shoal_pool_t *p, shoal_pool_stats_t *st, unsigned patience_ms)
{
    memset(st, 0, sizeof *st);
    st->size_ = (uint32_t)sizeof *st;
    st->state = atomic_load_explicit(&p->pub_state, memory_order_relaxed);
    if (!sum(p, st, patience_ms, false))
        return false;
    uint64_t settled = /* as peek's */
        st->messages_handled + st->messages_failed + st->messages_dropped + st->dead_lettered;
    st->queue_depth = st->messages_forwarded > settled ? st->messages_forwarded - settled : 0;
    return true;
}

bool shoal__pool_peek_within(shoal_pool_t *p, shoal_pool_stats_t *st, unsigned patience_ms)
{
    return peek(p, st, patience_ms ? patience_ms : 1);
}

bool shoal__pool_is_ended(shoal_pool_t *p)
{
    /* acquire: pairs with the release store in shoal__pool_ended. */
    return atomic_load_explicit(&p->pub_ended, memory_order_acquire) != 0;
}

bool shoal__pool_is_quiet(shoal_pool_t *p)
{
    /* acquire: pairs with the acq_rel decrements of the workers' references
     * (shoal__pool_unref): their last counts are seen. */
    return shoal__pool_is_ended(p) && atomic_load_explicit(&p->refs, memory_order_acquire) == 1;
}

static const char *state_name(uint32_t s)
{
    return s == SHOAL_POOL_DEGRADED   ? "degraded"
           : s == SHOAL_POOL_DRAINING ? "draining"
                                      : "running";
}

/* Whether stall s counts for pool p (one of its workers, at any depth). */
static bool stall_of(const shoal_stall_t *s, const shoal_pool_t *p)
{
    for (unsigned k = 0; k < SHOAL_POOL_MAX_DEPTH && s->groups[k] != NULL; k++)
        if (s->groups[k] == p)
            return true;
    return false;
}

/* "stalled": the pool's workers (and nested pools') in a handler past
 * stall_warn: [{"pid":"3.1","ms":1200,"thread":1}, ...]. */
static void inspect_stalled(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_inspect_t *out)
{
    size_t n = shoal__stalls(ctx->rt, NULL, 0, false);
    shoal_stall_t *s = n != 0 ? calloc(n, sizeof *s) : NULL;
    n = s != NULL ? shoal__stalls(ctx->rt, s, n, false) : 0; /* as many or fewer by now */
    size_t cap = 3 + n * 100, len = 1; /* "[]" and NUL; an object is at most 79 bytes */
    char *json = malloc(cap);
    if (json == NULL) {
        free(s);
        shoal__inspect_raw(out, "stalled", "[]");
        return;
    }
    json[0] = '[';
    for (size_t i = 0; i < n && len < cap; i++) {
        if (!stall_of(&s[i], p))
            continue;
        len += (size_t)snprintf(json + len, cap - len,
                                "%s{\"pid\":\"%" PRIu32 ".%" PRIu32 "\",\"ms\":%" PRIu64
                                ",\"thread\":%u}",
                                len > 1 ? "," : "", shoal__pid_slot(s[i].pid),
                                shoal__pid_gen(s[i].pid), s[i].elapsed_ns / 1000000u, s[i].thread);
    }
    snprintf(json + len, cap - len, "]");
    shoal__inspect_raw(out, "stalled", json);
    free(json);
    free(s);
}

static const char *source_state_name(uint32_t s)
{
    return s == SHOAL_SOURCE_RUNNING  ? "running"
           : s == SHOAL_SOURCE_DONE   ? "done"
           : s == SHOAL_SOURCE_FAILED ? "failed"
                                      : "none";
}

/* "pull": a pull pool's view of itself under its own names (shoal/pool.h:
 * received = messages_forwarded, completed = messages_handled, refused =
 * messages_unhandled), the buffer, the demand, and its source:
 * {"prefetch":1,...,"source":{"state":"none","items":0,"restarts":0}}. */
static void inspect_pull(const shoal_pool_stats_t *st, shoal_inspect_t *out)
{
    char json[640];
    snprintf(json, sizeof json,
             "{\"prefetch\":%" PRIu32 ",\"buffer\":%" PRIu64 ",\"buffer_depth\":%" PRIu64
             ",\"held\":%" PRIu64 ",\"demand\":%" PRIu64 ",\"received\":%" PRIu64
             ",\"delivered\":%" PRIu64 ",\"completed\":%" PRIu64 ",\"failed\":%" PRIu64
             ",\"refused\":%" PRIu64 ",\"redelivered\":%" PRIu64 ",\"dead_lettered\":%" PRIu64
             ",\"dropped\":%" PRIu64 ",\"source\":{\"state\":\"%s\",\"items\":%" PRIu64
             ",\"restarts\":%" PRIu32 "}}",
             st->prefetch, st->buffer, st->buffer_depth,
             st->queue_depth > st->buffer_depth ? st->queue_depth - st->buffer_depth : 0,
             st->demand, st->messages_forwarded, st->delivered, st->messages_handled,
             st->messages_failed, st->messages_unhandled, st->redelivered, st->dead_lettered,
             st->messages_dropped, source_state_name(st->source_state), st->source_items,
             st->source_restarts);
    shoal__inspect_raw(out, "pull", json);
}

/* "workers": a pull pool's workers by seat (Akka's GetWorkerStats), the
 * first SHOAL__PULL_WORKERS_SHOWN of them, and "workers_unlisted": how many
 * more there are:
 * [{"pid":"7.1","seat":0,"in_progress":1,"taken":9,"completed":8,"idle_ms":12,
 *   "idle":false},...]. */
static void inspect_pull_workers(shoal_pool_t *p, shoal_inspect_t *out)
{
    enum { EACH = 200 }; /* bytes an object takes at most */
    shoal_pull_worker_stats_t *w = calloc(SHOAL__PULL_WORKERS_SHOWN, sizeof *w);
    char *json = malloc(3 + (size_t)SHOAL__PULL_WORKERS_SHOWN * EACH);
    size_t n = w != NULL && json != NULL ? shoal__pull_workers(p, w, SHOAL__PULL_WORKERS_SHOWN) : 0;
    size_t shown = n < SHOAL__PULL_WORKERS_SHOWN ? n : SHOAL__PULL_WORKERS_SHOWN;
    if (json == NULL) {
        shoal__inspect_raw(out, "workers", "[]");
    } else {
        size_t len = 1, cap = 3 + (size_t)SHOAL__PULL_WORKERS_SHOWN * EACH;
        json[0] = '[';
        for (size_t i = 0; i < shown; i++)
            len += (size_t)snprintf(
                json + len, cap - len,
                "%s{\"pid\":\"%" PRIu32 ".%" PRIu32 "\",\"seat\":%" PRIu32
                ",\"in_progress\":%" PRIu32 ",\"taken\":%" PRIu64 ",\"completed\":%" PRIu64
                ",\"idle_ms\":%" PRIu64 ",\"idle\":%s}",
                i != 0 ? "," : "", shoal__pid_slot(w[i].pid), shoal__pid_gen(w[i].pid), w[i].seat,
                w[i].in_progress, w[i].taken, w[i].completed, w[i].idle_ns / 1000000u,
                w[i].idle ? "true" : "false");
        snprintf(json + len, cap - len, "]");
        shoal__inspect_raw(out, "workers", json);
    }
    shoal_inspect_uint(out, "workers_unlisted", n - shown);
    free(json);
    free(w);
}

/* "elastic": {"idle_timeout_ms":..,"max_waiting":..,"waiting_refused":..,"expired":..,
 * "lazy_grown":..,"autoscale":null | {"when":"busy,refused","busy_permille":..,
 * "wait_p99_us":..,"refused_per_s":..,"ups":..,"downs":..}} (shoal/pool.h). */
static void inspect_elastic(const shoal_pool_t *p, const shoal_pool_stats_t *st,
                            shoal_inspect_t *out)
{
    char as[400] = "null";
    const shoal_pool_autoscale_t *a = &p->spec.autoscale;
    if (st->autoscale != 0) {
        char when[40];
        snprintf(when, sizeof when, "%s%s%s%s%s", (a->when & SHOAL_AUTOSCALE_BUSY) ? "busy" : "",
                 (a->when & SHOAL_AUTOSCALE_BUSY) && (a->when & ~SHOAL_AUTOSCALE_BUSY) ? "," : "",
                 (a->when & SHOAL_AUTOSCALE_WAIT) ? "wait_p99" : "",
                 (a->when & SHOAL_AUTOSCALE_WAIT) && (a->when & SHOAL_AUTOSCALE_REFUSED) ? "," : "",
                 (a->when & SHOAL_AUTOSCALE_REFUSED) ? "refused" : "");
        snprintf(as, sizeof as,
                 "{\"when\":\"%s\",\"up_busy_permille\":%" PRIu32 ",\"down_busy_permille\":%" PRIu32
                 ",\"up_wait_us\":%" PRIu64 ",\"down_wait_us\":%" PRIu64
                 ",\"up_refused_per_s\":%" PRIu64 ",\"down_refused_per_s\":%" PRIu64
                 ",\"busy_permille\":%" PRIu32 ",\"wait_p99_us\":%" PRIu64
                 ",\"refused_per_s\":%" PRIu64 ",\"ups\":%" PRIu64 ",\"downs\":%" PRIu64 "}",
                 when, a->up_busy, a->down_busy, a->up_wait_us, a->down_wait_us, a->up_refused,
                 a->down_refused, st->busy, st->wait_p99_us, st->refused_per_s, st->autoscale_ups,
                 st->autoscale_downs);
    }
    char json[700];
    snprintf(
        json, sizeof json,
        "{\"idle_timeout_ms\":%" PRIu64 ",\"max_waiting\":%" PRIu32 ",\"waiting_refused\":%" PRIu64
        ",\"expired\":%" PRIu64 ",\"lazy_grown\":%" PRIu64 ",\"autoscale\":%s}",
        st->idle_timeout_ms, st->max_waiting, st->waiting_refused, st->expired, st->lazy_grown, as);
    shoal__inspect_raw(out, "elastic", json);
}

void shoal__pool_inspect(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_inspect_t *out)
{
    shoal_pool_stats_t st;
    shoal__pool_fill_stats(ctx, p, &st);
    shoal_inspect_str(out, "pool", p->name);
    shoal_inspect_str(out, "state", state_name(st.state));
    shoal_inspect_uint(out, "pool_size", st.pool_size);
    shoal_inspect_uint(out, "target_size", st.target_size);
    shoal_inspect_uint(out, "min_size", st.min_size);
    shoal_inspect_uint(out, "max_size", st.max_size);
    shoal_inspect_str(out, "worker_behaviour",
                      p->spec.worker ? p->spec.worker->name : p->spec.worker_pool->name);
    shoal_inspect_str(out, "kind", shoal__pool_kind_name(st.kind));
    if (st.kind == SHOAL_POOL_KIND_FORWARD || st.kind == SHOAL_POOL_KIND_CHECKOUT)
        shoal_inspect_str(out, "strategy", shoal__pool_strategy_name(st.strategy));
    shoal_inspect_bool(out, "worker_is_pool", p->spec.worker_pool != NULL);
    if (st.mailbox == SHOAL_MAILBOX_UNBOUNDED)
        shoal_inspect_str(out, "worker_mailbox_size", "unbounded");
    else
        shoal_inspect_uint(out, "worker_mailbox_size", st.mailbox);
    shoal_inspect_uint(out, "retiring", st.retiring);
    shoal_inspect_uint(out, "worker_restarts", st.worker_restarts);
    if (p->remote != NULL) { /* isolation: process */
        shoal_remote_info_t ri;
        shoal__remote_info(p->remote, &ri);
        shoal_inspect_str(out, "isolation", "process");
        shoal_inspect_int(out, "process_pid", ri.pid);
        shoal_inspect_uint(out, "processes_started", ri.started);
        shoal_inspect_uint(out, "processes_died", ri.died);
        shoal_inspect_uint(out, "process_sends_dropped", ri.sends_dropped);
        shoal_inspect_uint(out, "process_doorbell_deafened", ri.doorbell_deafened);
    }
    shoal_inspect_uint(out, "messages_forwarded", st.messages_forwarded);
    shoal_inspect_uint(out, "messages_unhandled", st.messages_unhandled);
    shoal_inspect_uint(out, "messages_handled", st.messages_handled);
    shoal_inspect_uint(out, "messages_failed", st.messages_failed);
    shoal_inspect_uint(out, "messages_dropped", st.messages_dropped);
    shoal_inspect_uint(out, "messages_requeued", st.messages_requeued);
    /* The ledger: forwarded = handled + failed + dropped + in flight. */
    uint64_t settled = st.messages_handled + st.messages_failed + st.messages_dropped;
    shoal_inspect_uint(out, "messages_in_flight",
                       st.messages_forwarded > settled ? st.messages_forwarded - settled : 0);
    shoal_inspect_uint(out, "queue_depth", st.queue_depth);
    /* pond's names for the same (and the workers now) */
    shoal_inspect_uint(out, "running", st.running);
    shoal_inspect_uint(out, "idle", st.idle);
    shoal_inspect_uint(out, "submitted", st.messages_forwarded);
    shoal_inspect_uint(out, "completed", st.messages_handled);
    shoal_inspect_uint(out, "failed", st.messages_failed);
    shoal_inspect_uint(out, "dropped", st.messages_dropped);
    shoal_inspect_uint(out, "resizes", st.resizes);
    shoal_inspect_uint(out, "waiting", st.waiting);
    inspect_elastic(p, &st, out);
    if (st.kind == SHOAL_POOL_KIND_PULL) {
        inspect_pull(&st, out);
        inspect_pull_workers(p, out);
    }
    if (p->co != NULL)
        shoal__checkout_inspect(p, &st, out);
    shoal_inspect_uint(out, "latency_samples", st.latency_samples);
    static const char *const q[3] = {"p50", "p90", "p99"};
    char key[32];
    for (int i = 0; i < 3; i++) {
        snprintf(key, sizeof key, "queue_wait_%s_ns", q[i]);
        shoal_inspect_uint(out, key, st.queue_wait_ns[i]);
    }
    for (int i = 0; i < 3; i++) {
        snprintf(key, sizeof key, "service_%s_ns", q[i]);
        shoal_inspect_uint(out, key, st.service_ns[i]);
    }
    inspect_stalled(ctx, p, out);
}

/* ---- counters ----------------------------------------------------------- */

unsigned shoal__hist_bucket(uint64_t ns)
{
    if (ns < 4)
        return (unsigned)ns;
    unsigned b = 63u - (unsigned)__builtin_clzll(ns); /* >= 2 */
    unsigned i = (b - 1) * 4 + (unsigned)((ns >> (b - 2)) & 3);
    return i < SHOAL_HIST_BUCKETS ? i : SHOAL_HIST_BUCKETS - 1;
}

/* The largest latency bucket i holds. */
static uint64_t bucket_top(unsigned i)
{
    if (i < 4)
        return i;
    unsigned b = i / 4 + 1;
    return ((UINT64_C(5) + i % 4) << (b - 2)) - 1;
}

uint64_t shoal__hist_percentile(const uint64_t *h, unsigned per_mille)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < SHOAL_HIST_BUCKETS; i++)
        total += h[i];
    if (total == 0)
        return 0;
    uint64_t rank = (total * per_mille + 999) / 1000, seen = 0;
    for (unsigned i = 0; i < SHOAL_HIST_BUCKETS; i++) {
        seen += h[i];
        if (seen >= rank)
            return bucket_top(i);
    }
    return 0;
}

static void percentiles(const uint64_t *h, uint64_t out[3])
{
    static const unsigned per_mille[3] = {500, 900, 990};
    for (unsigned q = 0; q < 3; q++)
        out[q] = shoal__hist_percentile(h, per_mille[q]);
}

void shoal__pool_sum(const shoal_pool_t *p, shoal_pool_stats_t *st) { sum(p, st, 0, true); }

/* patience_ms 0: waits for a remote pool's children's lock; else gives up
 * after that long (false). latencies: the histograms summed into st's
 * percentiles too (most of the work: two of SHOAL_HIST_BUCKETS a stripe). */
static bool sum(const shoal_pool_t *p, shoal_pool_stats_t *st, unsigned patience_ms, bool latencies)
{
    for (uint32_t s = 0; s < p->nstripes; s++) {
        const shoal_pool_stripe_t *x = &p->stripes[s];
        st->messages_forwarded += atomic_load_explicit(&x->forwarded, memory_order_relaxed);
        st->messages_unhandled += atomic_load_explicit(&x->unhandled, memory_order_relaxed);
        st->delivered += atomic_load_explicit(&x->delivered, memory_order_relaxed);
        st->redelivered += atomic_load_explicit(&x->redelivered, memory_order_relaxed);
        st->dead_lettered += atomic_load_explicit(&x->dead_lettered, memory_order_relaxed);
        /* acquire: pairs with shoal__pool_count_handled's release. */
        st->messages_handled += atomic_load_explicit(&x->handled, memory_order_acquire);
        st->messages_failed += atomic_load_explicit(&x->failed, memory_order_relaxed);
        st->messages_dropped += atomic_load_explicit(&x->dropped, memory_order_relaxed);
        st->latency_samples += atomic_load_explicit(&x->samples, memory_order_relaxed);
    }
    shoal_pool_hist_t h;
    memset(&h, 0, sizeof h);
    shoal_pool_hist_t *hp = latencies ? &h : NULL;
    if (latencies)
        shoal__pool_hist_add(p->stripes, p->nstripes, &h);
    if (p->remote != NULL && patience_ms == 0) /* the children's: handled, failed, ... size */
        shoal__remote_sum(p->remote, st, hp);
    else if (p->remote != NULL && !shoal__remote_sum_within(p->remote, st, hp, patience_ms))
        return false;
    if (!latencies)
        return true;
    percentiles(h.wait, st->queue_wait_ns);
    percentiles(h.service, st->service_ns);
    return true;
}

void shoal__pool_hist_add(const shoal_pool_stripe_t *x, uint32_t n, shoal_pool_hist_t *h)
{
    for (uint32_t s = 0; s < n; s++) {
        h->wait_sum_ns += atomic_load_explicit(&x[s].wait_sum, memory_order_relaxed);
        h->service_sum_ns += atomic_load_explicit(&x[s].service_sum, memory_order_relaxed);
        for (unsigned i = 0; i < SHOAL_HIST_BUCKETS; i++) {
            h->wait[i] += atomic_load_explicit(&x[s].wait[i], memory_order_relaxed);
            h->service[i] += atomic_load_explicit(&x[s].service[i], memory_order_relaxed);
        }
    }
}

void shoal__pool_hist(shoal_pool_t *p, shoal_pool_hist_t *out)
{
    memset(out, 0, sizeof *out);
    shoal__pool_hist_add(p->stripes, p->nstripes, out);
    if (p->remote != NULL)
        shoal__remote_hist(p->remote, out);
}
