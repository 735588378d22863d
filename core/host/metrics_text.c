/* metrics_text.c - every series of GET /metrics, rendered from a snapshot
 * (metrics.h) in the Prometheus text exposition format 0.0.4: a # HELP and
 * a # TYPE line before each family, label values escaped, the latency
 * histograms as cumulative _bucket{le=...}, _sum and _count series.
 * The elastic families are metrics_elastic.c's. Built into shoald only.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/metrics.h"
#include "pool/pool.h"
#include "runtime/runtime.h"
#include "shoal/plugin.h"

#ifndef SHOAL_METRICS_VERSION
#define SHOAL_METRICS_VERSION "unknown"
#endif

void shoal__metrics_put(shoal_metrics_buf_t *b, const char *fmt, ...)
{
    for (int tries = 0; tries < 2 && !b->failed; tries++) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->text + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap * 2 > b->len + (size_t)n + 1 ? b->cap * 2 : b->len + (size_t)n + 1;
        char *t = realloc(b->text, cap);
        if (t == NULL) {
            b->failed = true;
            return;
        }
        b->text = t;
        b->cap = cap;
    }
}

void shoal__metrics_family(shoal_metrics_buf_t *b, const char *name, const char *type,
                           const char *help)
{
    shoal__metrics_put(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value escaped as the format wants: \\, \" and \n. */
static const char *esc(const char *s, char *out, size_t size)
{
    size_t n = 0;
    for (; *s && n + 3 < size; s++) {
        if (*s == '\\' || *s == '"') {
            out[n++] = '\\';
            out[n++] = *s;
        } else if (*s == '\n') {
            out[n++] = '\\';
            out[n++] = 'n';
        } else {
            out[n++] = *s;
        }
    }
    out[n] = '\0';
    return out;
}

/* ns as seconds, exactly ("0.000001024", "17.179869184", "0"). */
static const char *seconds(uint64_t ns, char out[40])
{
    int n = snprintf(out, 40, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);
    while (n > 0 && out[n - 1] == '0')
        out[--n] = '\0';
    if (n > 0 && out[n - 1] == '.')
        out[--n] = '\0';
    return out;
}

/* ---- per pool ------------------------------------------------------------ */

typedef shoal_metrics_view_t pool_view_t;

typedef uint64_t (*stat_fn)(const shoal_pool_stats_t *);

#define STAT(f)                                                                                    \
    static uint64_t get_##f(const shoal_pool_stats_t *st) { return st->f; }
STAT(messages_forwarded)
STAT(messages_unhandled)
STAT(messages_handled)
STAT(messages_failed)
STAT(messages_dropped)
STAT(messages_requeued)
STAT(worker_restarts)
STAT(pool_size)
STAT(target_size)
STAT(queue_depth)
STAT(retiring)
STAT(running)
STAT(idle)
STAT(resizes)
STAT(prefetch)
STAT(buffer)
STAT(buffer_depth)
STAT(demand)
STAT(delivered)
STAT(redelivered)
STAT(dead_lettered)
STAT(source_items)
STAT(source_restarts)
#undef STAT

static const struct {
    const char *name, *type, *help;
    stat_fn get;
} pool_series[] = {
    {"shoal_pool_messages_forwarded_total", "counter",
     "Messages the pool accepted: forwarded to a worker, or, in a pull pool, taken into its "
     "buffer.",
     get_messages_forwarded},
    {"shoal_pool_messages_refused_total", "counter",
     "Messages refused because every worker was full, or a pull pool's buffer was (SHOAL_EBUSY).",
     get_messages_unhandled},
    {"shoal_pool_messages_handled_total", "counter", "Messages its workers handled.",
     get_messages_handled},
    {"shoal_pool_messages_failed_total", "counter",
     "Messages whose handler failed or whose process died with them.", get_messages_failed},
    {"shoal_pool_messages_dropped_total", "counter",
     "Messages accepted and then dropped (a shutdown past its drain deadline).",
     get_messages_dropped},
    {"shoal_pool_messages_requeued_total", "counter",
     "Messages a dead worker held, handed to the others.", get_messages_requeued},
    {"shoal_pool_worker_restarts_total", "counter", "Workers restarted after they ended.",
     get_worker_restarts},
    {"shoal_pool_size", "gauge", "Workers in the pool now.", get_pool_size},
    {"shoal_pool_target_size", "gauge", "Workers the pool wants.", get_target_size},
    {"shoal_pool_queue_depth", "gauge",
     "Messages in flight: accepted and not yet handled, failed or dropped.", get_queue_depth},
    {"shoal_pool_retiring", "gauge", "Workers removed from the pool, finishing their mailboxes.",
     get_retiring},
    {"shoal_pool_workers_running", "gauge",
     "Workers handling a message or with one queued (0 for a pool of pools or an isolated pool).",
     get_running},
    {"shoal_pool_workers_idle", "gauge",
     "Workers waiting for work (0 for a pool of pools or an isolated pool).", get_idle},
    {"shoal_pool_resizes_total", "counter",
     "Resizes that changed the pool's target size (commands and reloads).", get_resizes},
    /* pond's names for four of the above, as inspect has them too */
    {"shoal_pool_submitted_total", "counter",
     "pond's name for shoal_pool_messages_forwarded_total: messages the pool accepted.",
     get_messages_forwarded},
    {"shoal_pool_completed_total", "counter",
     "pond's name for shoal_pool_messages_handled_total: messages its workers handled.",
     get_messages_handled},
    {"shoal_pool_failed_total", "counter",
     "pond's name for shoal_pool_messages_failed_total: messages whose handler failed.",
     get_messages_failed},
    {"shoal_pool_dropped_total", "counter",
     "pond's name for shoal_pool_messages_dropped_total: messages accepted, then dropped.",
     get_messages_dropped},
};

/* A pull pool's own (shoal/pull.h), written for pull pools only: a forward
 * pool has no buffer, rather than an empty one of size 0, and a 0 there
 * would turn ratios such as items/capacity into NaN and set off alerts on
 * demand for every forward pool. */
static const struct {
    const char *name, *type, *help;
    stat_fn get;
} pull_series[] = {
    {"shoal_pool_prefetch", "gauge", "Items one worker of a pull pool takes and holds at most.",
     get_prefetch},
    {"shoal_pool_buffer_capacity", "gauge",
     "Items a pull pool's buffer holds at most (sends past it are refused with SHOAL_EBUSY).",
     get_buffer},
    {"shoal_pool_buffer_items", "gauge", "Items in a pull pool's buffer now, taken by no worker.",
     get_buffer_depth},
    {"shoal_pool_demand_items", "gauge",
     "Items a pull pool's workers could take now: size x prefetch minus what they hold.",
     get_demand},
    {"shoal_pool_items_delivered_total", "counter",
     "Items a pull pool's workers took from its buffer (redeliveries included).", get_delivered},
    {"shoal_pool_items_redelivered_total", "counter",
     "Items a pull pool gave to another worker after the one holding them failed.",
     get_redelivered},
    {"shoal_pool_items_dead_lettered_total", "counter",
     "Items a pull pool sent on to its dead_letter pool after their last redelivery.",
     get_dead_lettered},
    {"shoal_pool_source_epic_items", "gauge",
     "Items a pull pool's source has sent in its current epic (0 without a source).",
     get_source_items},
    {"shoal_pool_source_restarts_total", "counter",
     "Times a pull pool's source was started again after it failed.", get_source_restarts},
};

static const char *const state_names[] = {"running", "degraded", "draining"};
/* By SHOAL_SOURCE_* (shoal/pull.h). */
static const char *const source_state_names[] = {"none", "running", "done", "failed"};

/* Powers of 4 ns, 2^8 (256 ns) to 2^34 (about 17 s): le = 2^b ns counts the
 * samples below 2^b ns, i.e. the log2 sub-buckets before index (b-1)*4
 * (pool.h: 4 buckets per power of two). */
#define LE_FIRST 8u
#define LE_LAST 34u

static void histogram(shoal_metrics_buf_t *b, const pool_view_t *v, size_t n, const char *name,
                      const char *help, bool wait)
{
    char full[96];
    shoal__metrics_family(b, name, "histogram", help);
    for (size_t k = 0; k < n; k++) {
        const uint64_t *h = wait ? v[k].hist->wait : v[k].hist->service;
        uint64_t cum = 0, total = 0;
        unsigned next = 0;
        for (unsigned i = 0; i < SHOAL_HIST_BUCKETS; i++)
            total += h[i];
        for (unsigned e = LE_FIRST; e <= LE_LAST; e += 2) {
            unsigned upto = (e - 1) * 4;
            for (; next < upto; next++)
                cum += h[next];
            char le[40];
            shoal__metrics_put(b, "%s_bucket{pool=\"%s\",le=\"%s\"} %" PRIu64 "\n", name,
                               v[k].label, seconds(UINT64_C(1) << e, le), cum);
        }
        shoal__metrics_put(b, "%s_bucket{pool=\"%s\",le=\"+Inf\"} %" PRIu64 "\n", name, v[k].label,
                           total);
        char sum[40];
        snprintf(full, sizeof full, "%s_sum", name);
        shoal__metrics_put(b, "%s{pool=\"%s\"} %s\n", full, v[k].label,
                           seconds(wait ? v[k].hist->wait_sum_ns : v[k].hist->service_sum_ns, sum));
        shoal__metrics_put(b, "%s_count{pool=\"%s\"} %" PRIu64 "\n", name, v[k].label, total);
    }
}

/* A pull pool's workers, one series per seat (the first
 * SHOAL__PULL_WORKERS_SHOWN): a replacement takes its seat, and its
 * counters start again from 0 (a counter reset). */
enum { W_COMPLETED, W_IN_PROGRESS, W_IDLE };
static const struct {
    const char *name, *type, *help;
    unsigned what;
} worker_series[] = {
    {"shoal_pull_worker_completed_total", "counter",
     "Items the worker in this seat of a pull pool handled (since it started).", W_COMPLETED},
    {"shoal_pull_worker_in_progress", "gauge",
     "Items the worker in this seat of a pull pool holds: taken, not settled.", W_IN_PROGRESS},
    {"shoal_pull_worker_idle_seconds_total", "counter",
     "Time the worker in this seat of a pull pool waited for work (since it started).", W_IDLE},
};

static void render_workers(shoal_metrics_buf_t *b, const pool_view_t *v, size_t n)
{
    for (size_t f = 0; f < sizeof worker_series / sizeof worker_series[0]; f++) {
        shoal__metrics_family(b, worker_series[f].name, worker_series[f].type,
                              worker_series[f].help);
        for (size_t k = 0; k < n; k++) {
            for (size_t i = 0; i < v[k].nworkers; i++) {
                const shoal_pull_worker_stats_t *w = &v[k].workers[i];
                if (worker_series[f].what == W_IDLE) {
                    char sec[40];
                    shoal__metrics_put(b, "%s{pool=\"%s\",worker=\"%" PRIu32 "\"} %s\n",
                                       worker_series[f].name, v[k].label, w->seat,
                                       seconds(w->idle_ns, sec));
                    continue;
                }
                uint64_t x = worker_series[f].what == W_COMPLETED ? w->completed : w->in_progress;
                shoal__metrics_put(b, "%s{pool=\"%s\",worker=\"%" PRIu32 "\"} %" PRIu64 "\n",
                                   worker_series[f].name, v[k].label, w->seat, x);
            }
        }
    }
}

/* The pull pools' families (pull_series, then their sources' state, then
 * their workers'), none at all when no pool is a pull pool. */
static void render_pull(shoal_metrics_buf_t *b, const pool_view_t *v, size_t n)
{
    size_t npull = 0;
    for (size_t k = 0; k < n; k++)
        npull += v[k].st.kind == SHOAL_POOL_KIND_PULL;
    if (npull == 0)
        return;
    for (size_t f = 0; f < sizeof pull_series / sizeof pull_series[0]; f++) {
        shoal__metrics_family(b, pull_series[f].name, pull_series[f].type, pull_series[f].help);
        for (size_t k = 0; k < n; k++)
            if (v[k].st.kind == SHOAL_POOL_KIND_PULL)
                shoal__metrics_put(b, "%s{pool=\"%s\"} %" PRIu64 "\n", pull_series[f].name,
                                   v[k].label, pull_series[f].get(&v[k].st));
    }
    shoal__metrics_family(
        b, "shoal_pool_source_state", "gauge",
        "1 for the state of a pull pool's source (none, running, done, failed), 0 for the "
        "others.");
    for (size_t k = 0; k < n; k++)
        for (uint32_t st = 0; st < 4 && v[k].st.kind == SHOAL_POOL_KIND_PULL; st++)
            shoal__metrics_put(b, "shoal_pool_source_state{pool=\"%s\",state=\"%s\"} %d\n",
                               v[k].label, source_state_names[st], v[k].st.source_state == st);
    render_workers(b, v, n);
}

static void render_pools(const shoal_metrics_snap_t *s, shoal_metrics_buf_t *b)
{
    size_t n = s->npools;
    pool_view_t *v = n ? calloc(n, sizeof *v) : NULL;
    shoal_pool_hist_t *hist = n ? calloc(n, sizeof *hist) : NULL;
    if (n != 0 && (v == NULL || hist == NULL)) {
        b->failed = true;
        goto done;
    }
    /* Each pool read once, so every family shows the same moment of it. */
    for (size_t k = 0; k < n; k++) {
        v[k].hist = &hist[k];
        shoal__pool_peek(s->pools[k].rec, &v[k].st);
        shoal__pool_hist(s->pools[k].rec, &hist[k]);
        esc(s->pools[k].name, v[k].label, sizeof v[k].label);
        if (v[k].st.kind == SHOAL_POOL_KIND_PULL) {
            if ((v[k].workers = calloc(SHOAL__PULL_WORKERS_SHOWN, sizeof *v[k].workers)) == NULL) {
                b->failed = true;
                goto done;
            }
            size_t w =
                shoal__pull_workers(s->pools[k].rec, v[k].workers, SHOAL__PULL_WORKERS_SHOWN);
            v[k].nworkers = w < SHOAL__PULL_WORKERS_SHOWN ? w : SHOAL__PULL_WORKERS_SHOWN;
        }
    }
    for (size_t f = 0; f < sizeof pool_series / sizeof pool_series[0]; f++) {
        shoal__metrics_family(b, pool_series[f].name, pool_series[f].type, pool_series[f].help);
        for (size_t k = 0; k < n; k++)
            shoal__metrics_put(b, "%s{pool=\"%s\"} %" PRIu64 "\n", pool_series[f].name, v[k].label,
                               pool_series[f].get(&v[k].st));
    }
    shoal__metrics_family(
        b, "shoal_pool_state", "gauge",
        "1 for the state the pool is in (running, degraded, draining), 0 for the others.");
    for (size_t k = 0; k < n; k++)
        for (uint32_t st = 0; st < 3; st++)
            shoal__metrics_put(b, "shoal_pool_state{pool=\"%s\",state=\"%s\"} %d\n", v[k].label,
                               state_names[st], v[k].st.state == st);
    shoal__metrics_render_elastic(b, v, n);
    render_pull(b, v, n);
    shoal__metrics_render_checkout(b, v, n);
    histogram(b, v, n, "shoal_pool_queue_wait_seconds",
              "Time a message waited in a worker's mailbox, over the sampled messages (one in 16 "
              "is timed; failed ones are not).",
              true);
    histogram(b, v, n, "shoal_pool_service_seconds",
              "Time a handler took, over the sampled messages (one in 16 is timed; failed ones "
              "are not).",
              false);
done:
    for (size_t k = 0; v != NULL && k < n; k++)
        free(v[k].workers);
    free(v);
    free(hist);
}

/* ---- runtime and host ----------------------------------------------------- */

static void counter(shoal_metrics_buf_t *b, const char *name, const char *help, uint64_t x)
{
    shoal__metrics_family(b, name, "counter", help);
    shoal__metrics_put(b, "%s %" PRIu64 "\n", name, x);
}

static void gauge(shoal_metrics_buf_t *b, const char *name, const char *help, uint64_t x)
{
    shoal__metrics_family(b, name, "gauge", help);
    shoal__metrics_put(b, "%s %" PRIu64 "\n", name, x);
}

static void render_runtime(const shoal_metrics_snap_t *s, shoal_metrics_buf_t *b)
{
    shoal_runtime_stats_t rs;
    shoal_runtime_stats(s->rt, &rs);
    gauge(b, "shoal_runtime_threads", "Dispatcher threads (compensating ones not counted).",
          shoal_runtime_threads(s->rt));
    gauge(b, "shoal_runtime_extra_threads",
          "Compensating threads running now, for handlers that do not return.",
          rs.extra_threads_live);
    gauge(b, "shoal_runtime_actors", "Live actors.", rs.actors_live);
    counter(b, "shoal_runtime_actors_spawned_total", "Actors spawned.", rs.actors_spawned);
    shoal__metrics_family(
        b, "shoal_runtime_sends_total", "counter",
        "Sends to a mailbox: accepted, refused for want of room (a full mailbox SHOAL_EFULL, a "
        "pool's workers all full or runtime.max_queued reached SHOAL_EBUSY, a checkout pool past "
        "max + queue_max SHOAL_ENOMEMBERS), noproc (no such actor); queue_limit counts those "
        "refused at runtime.max_queued again.");
    shoal__metrics_put(b,
                       "shoal_runtime_sends_total{result=\"accepted\"} %" PRIu64 "\n"
                       "shoal_runtime_sends_total{result=\"refused\"} %" PRIu64 "\n"
                       "shoal_runtime_sends_total{result=\"noproc\"} %" PRIu64 "\n"
                       "shoal_runtime_sends_total{result=\"queue_limit\"} %" PRIu64 "\n",
                       rs.msgs_sent, rs.msgs_refused, rs.msgs_noproc, rs.refused_queued);
    counter(b, "shoal_runtime_messages_handled_total", "Messages passed to a callback.",
            rs.msgs_handled);
    counter(b, "shoal_runtime_messages_dropped_total",
            "Messages accepted, then dropped because the receiver ended.", rs.msgs_dropped);
    counter(b, "shoal_runtime_turns_total", "Actor turns run.", rs.turns);
    counter(b, "shoal_runtime_steals_total", "Actors taken from another thread's ring.", rs.steals);
    counter(b, "shoal_runtime_parks_total", "Times a dispatcher thread went to sleep.", rs.parks);
    counter(b, "shoal_runtime_stalls_total", "Handlers that ran past runtime.stall_warn.",
            rs.stalls);
    counter(b, "shoal_runtime_extra_threads_started_total",
            "Compensating threads started for handlers that do not return.",
            rs.extra_threads_started);
    gauge(b, "shoal_runtime_held_back",
          "Members waiting now because stuck callbacks hold every compensating thread.",
          rs.held_back);
    counter(b, "shoal_runtime_held_back_total",
            "Times a member was held back while stuck callbacks held every compensating thread.",
            rs.held_back_total);
    gauge(b, "shoal_runtime_unbounded_queued",
          "Messages held by unbounded mailboxes now (what runtime.max_queued bounds).",
          rs.unbounded_pushed > rs.unbounded_popped ? rs.unbounded_pushed - rs.unbounded_popped
                                                    : 0);
}

/* The larger of v and *seen, which it becomes (scrapes run on several
 * threads at once). relaxed: a value of its own; nothing is read through
 * it. */
static uint64_t at_least_seen(_Atomic uint64_t *seen, uint64_t v)
{
    uint64_t old = atomic_load_explicit(seen, memory_order_relaxed);
    while (old < v && !atomic_compare_exchange_weak_explicit(seen, &old, v, memory_order_relaxed,
                                                             memory_order_relaxed))
        ;
    return old > v ? old : v;
}

static void render_host(const shoal_metrics_snap_t *s, shoal_metrics_buf_t *b)
{
    shoal__metrics_family(b, "shoal_build_info", "gauge",
                          "Always 1: the version and plugin ABI of this shoald.");
    shoal__metrics_put(b, "shoal_build_info{version=\"%s\",abi=\"%d.%d\"} 1\n",
                       SHOAL_METRICS_VERSION, SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR);
    gauge(b, "shoal_generation",
          "The config generation running (1 for the file shoald started "
          "with, one more for each successful reload).",
          s->generation);
    shoal__metrics_family(b, "shoal_reloads_total", "counter",
                          "Reloads, by result (a failed one changed nothing).");
    shoal__metrics_put(b, "shoal_reloads_total{result=\"ok\"} %" PRIu64 "\n", s->reloads);
    shoal__metrics_put(b, "shoal_reloads_total{result=\"failed\"} %" PRIu64 "\n",
                       s->reloads_failed);
    /* The ledger: the forgotten pools' final counts, the draining ones' as
     * the snapshot copied them, and the current ones' read now. */
    shoal_host_counts_t c = s->gone;
    c.accepted += s->draining.accepted;
    c.handled += s->draining.handled;
    c.failed += s->draining.failed;
    c.dropped += s->draining.dropped;
    c.refused += s->draining.refused;
    for (size_t i = 0; i < s->npools; i++) {
        shoal_pool_stats_t st;
        shoal__pool_peek(s->pools[i].rec, &st);
        c.accepted += st.messages_forwarded;
        c.handled += st.messages_handled;
        c.failed += st.messages_failed;
        c.dropped += st.messages_dropped;
        c.refused += st.messages_unhandled;
    }
    /* A counter never goes down: a pool a reload sets draining is counted
     * from the copy its new snapshot took, which a scrape of the old one,
     * reading the pool live a moment later, may have passed (accepted
     * 5517008 -> 5517007 was read, and Prometheus takes any drop for a
     * reset). Each value is at least the highest one rendered before. */
    uint64_t *vals[5] = {&c.accepted, &c.handled, &c.failed, &c.dropped, &c.refused};
    for (size_t k = 0; k < 5; k++)
        *vals[k] = at_least_seen(&s->ledger_seen[k], *vals[k]);
    shoal__metrics_family(
        b, "shoal_ledger_messages_total", "counter",
        "Every pool shoald started, removed and replaced ones included: accepted = handled + "
        "failed + dropped + in flight; refused beside.");
    shoal__metrics_put(b,
                       "shoal_ledger_messages_total{outcome=\"accepted\"} %" PRIu64 "\n"
                       "shoal_ledger_messages_total{outcome=\"handled\"} %" PRIu64 "\n"
                       "shoal_ledger_messages_total{outcome=\"failed\"} %" PRIu64 "\n"
                       "shoal_ledger_messages_total{outcome=\"dropped\"} %" PRIu64 "\n"
                       "shoal_ledger_messages_total{outcome=\"refused\"} %" PRIu64 "\n",
                       c.accepted, c.handled, c.failed, c.dropped, c.refused);
}

/* The sources (source.h): what each actor sent, its restarts, up or down. */
static void render_sources(const shoal_metrics_snap_t *s, shoal_metrics_buf_t *b)
{
    static const struct {
        const char *name, *type, *help;
    } families[] = {
        {"shoal_source_messages_sent_total", "counter",
         "Messages a source's actor sent that were accepted (sends to itself not counted)."},
        {"shoal_source_messages_refused_total", "counter",
         "Messages a source's actor sent that were refused for want of room (SHOAL_EFULL, "
         "SHOAL_EBUSY, SHOAL_ENOMEMBERS)."},
        {"shoal_source_restarts_total", "counter",
         "Times a source's actor was restarted after it ended."},
        {"shoal_source_up", "gauge",
         "1 while a source runs, 0 while it is down (past its restart budget, waiting for its "
         "backoff)."},
    };
    size_t n = s->nsources;
    if (n == 0)
        return;
    /* Each source read once, so every family shows the same moment of it. */
    struct {
        char label[160];
        uint64_t v[4];
    } *view = calloc(n, sizeof *view);
    if (view == NULL) {
        b->failed = true;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const shoal_metrics_pool_t *ms = &s->sources[i];
        shoal_pool_stats_t st;
        shoal__pool_peek(ms->rec, &st);
        esc(ms->name, view[i].label, sizeof view[i].label);
        /* relaxed: monotonic counts on their own (actor.h) */
        view[i].v[0] = atomic_load_explicit(&ms->rec->sends.sent, memory_order_relaxed);
        view[i].v[1] = atomic_load_explicit(&ms->rec->sends.refused, memory_order_relaxed);
        view[i].v[2] = st.worker_restarts;
        view[i].v[3] = st.state != SHOAL_POOL_DEGRADED;
    }
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        shoal__metrics_family(b, families[f].name, families[f].type, families[f].help);
        for (size_t i = 0; i < n; i++)
            shoal__metrics_put(b, "%s{source=\"%s\"} %" PRIu64 "\n", families[f].name,
                               view[i].label, view[i].v[f]);
    }
    free(view);
}

void shoal__metrics_render(const shoal_metrics_snap_t *s, shoal_metrics_buf_t *b)
{
    render_pools(s, b);
    render_sources(s, b);
    render_runtime(s, b);
    render_host(s, b);
}
