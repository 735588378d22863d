/* metrics_elastic.c - the /metrics families of elastic pools (shoal/pool.h:
 * idle_timeout, max_waiting, autoscale), rendered from the pools' views
 * (metrics.h) in the format metrics_text.c writes.
 *
 * Every pool has bounds and may have senders waiting for room: its
 * shoal_pool_min_workers, shoal_pool_max_workers and shoal_pool_waiting
 * are always there. The rest are an elastic pool's only (host.h:
 * shoal__host_is_elastic), and a setting's gauge only where it is set:
 * a pool without max_waiting has no bound rather than a bound of 0, and a
 * 0 would make waiting / max_waiting an infinity that pages someone. A
 * family with no series is not written at all. Built into shoald only.
 */
#include <inttypes.h>
#include <stdio.h>

#include "host/metrics.h"

typedef enum which_e { ALL, ELASTIC, BOUNDED, IDLE_TIMEOUT, AUTOSCALED } which_t;

static bool shown(const shoal_pool_stats_t *st, which_t w)
{
    switch (w) {
    case ALL:
        return true;
    case ELASTIC:
        return shoal__host_is_elastic(st);
    case BOUNDED:
        return st->max_waiting != 0;
    case IDLE_TIMEOUT:
        return st->idle_timeout_ms != 0;
    case AUTOSCALED:
        return st->autoscale != 0;
    }
    return false;
}

/* A thousandth as a decimal, exactly and without trailing zeros: 615 ->
 * "0.615", 100 -> "0.1", 1000 -> "1". */
static const char *thousandths(uint64_t x, char out[32])
{
    int n = snprintf(out, 32, "%" PRIu64 ".%03" PRIu64, x / 1000, x % 1000);
    while (n > 0 && out[n - 1] == '0')
        out[--n] = '\0';
    if (n > 0 && out[n - 1] == '.')
        out[--n] = '\0';
    return out;
}

static uint64_t get_min(const shoal_pool_stats_t *st) { return st->min_size; }
static uint64_t get_max(const shoal_pool_stats_t *st) { return st->max_size; }
static uint64_t get_waiting(const shoal_pool_stats_t *st) { return st->waiting; }
static uint64_t get_max_waiting(const shoal_pool_stats_t *st) { return st->max_waiting; }
static uint64_t get_refused(const shoal_pool_stats_t *st) { return st->waiting_refused; }
static uint64_t get_idle_ms(const shoal_pool_stats_t *st) { return st->idle_timeout_ms; }
static uint64_t get_expired(const shoal_pool_stats_t *st) { return st->expired; }
static uint64_t get_lazy(const shoal_pool_stats_t *st) { return st->lazy_grown; }
static uint64_t get_busy(const shoal_pool_stats_t *st) { return st->busy; }

/* How a value is written: as it is, or in thousandths (ms as seconds,
 * permille as a ratio). */
enum { PLAIN, MILLI };

static const struct {
    const char *name, *type, *help;
    which_t which;
    uint64_t (*get)(const shoal_pool_stats_t *);
    int unit;
} series[] = {
    {"shoal_pool_min_workers", "gauge",
     "The fewest workers the pool may have (min, autoscale.min, or shoalctl scale MIN..MAX).", ALL,
     get_min, PLAIN},
    {"shoal_pool_max_workers", "gauge",
     "The most workers the pool may have (max, autoscale.max, or shoalctl scale MIN..MAX).", ALL,
     get_max, PLAIN},
    {"shoal_pool_waiting", "gauge",
     "Senders waiting for room in the pool now: threads in send_wait and actors that asked for "
     "SHOAL_MSG_ROOM.",
     ALL, get_waiting, PLAIN},
    {"shoal_pool_max_waiting", "gauge",
     "Senders that may wait for room in the pool at once (max_waiting); pools with a bound only.",
     BOUNDED, get_max_waiting, PLAIN},
    {"shoal_pool_waiting_refused_total", "counter",
     "Asks for room refused because max_waiting senders already waited (SHOAL_EOVERLOAD); "
     "elastic pools only.",
     ELASTIC, get_refused, PLAIN},
    {"shoal_pool_idle_timeout_seconds", "gauge",
     "How long a worker waits for work before it ends, down to min (idle_timeout); pools with one "
     "only.",
     IDLE_TIMEOUT, get_idle_ms, MILLI},
    {"shoal_pool_workers_expired_total", "counter",
     "Workers ended because they waited for work past idle_timeout; elastic pools only.", ELASTIC,
     get_expired, PLAIN},
    {"shoal_pool_workers_lazy_started_total", "counter",
     "Workers started for a send that found every worker full (idle_timeout's lazy grow); "
     "elastic pools only.",
     ELASTIC, get_lazy, PLAIN},
    {"shoal_pool_busy_ratio", "gauge",
     "Time the workers spent handling over wall time x workers, 0 to 1, at autoscale's last "
     "reading (4 a second); autoscaled pools only.",
     AUTOSCALED, get_busy, MILLI},
};

void shoal__metrics_render_elastic(shoal_metrics_buf_t *b, const shoal_metrics_view_t *v, size_t n)
{
    for (size_t f = 0; f < sizeof series / sizeof series[0]; f++) {
        bool any = false;
        for (size_t k = 0; k < n; k++) {
            if (!shown(&v[k].st, series[f].which))
                continue;
            if (!any)
                shoal__metrics_family(b, series[f].name, series[f].type, series[f].help);
            any = true;
            uint64_t x = series[f].get(&v[k].st);
            char text[32];
            if (series[f].unit == MILLI)
                shoal__metrics_put(b, "%s{pool=\"%s\"} %s\n", series[f].name, v[k].label,
                                   thousandths(x, text));
            else
                shoal__metrics_put(b, "%s{pool=\"%s\"} %" PRIu64 "\n", series[f].name, v[k].label,
                                   x);
        }
    }
    bool any = false; /* autoscaled pools, and those it resized before a reload turned it off */
    for (size_t k = 0; k < n; k++) {
        const shoal_pool_stats_t *st = &v[k].st;
        if (st->autoscale == 0 && st->autoscale_ups == 0 && st->autoscale_downs == 0)
            continue;
        if (!any)
            shoal__metrics_family(b, "shoal_pool_autoscale_decisions_total", "counter",
                                  "Times autoscale resized the pool, by direction (up: grew, "
                                  "down: shrank); autoscaled pools only.");
        any = true;
        shoal__metrics_put(b,
                           "shoal_pool_autoscale_decisions_total{pool=\"%s\",direction=\"up\"} "
                           "%" PRIu64 "\n"
                           "shoal_pool_autoscale_decisions_total{pool=\"%s\",direction=\"down\"} "
                           "%" PRIu64 "\n",
                           v[k].label, st->autoscale_ups, v[k].label, st->autoscale_downs);
    }
}
