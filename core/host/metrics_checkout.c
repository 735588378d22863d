/* metrics_checkout.c - the /metrics families of checkout pools
 * (shoal/checkout.h), rendered from the pools' views (metrics.h) in the
 * format metrics_text.c writes: a checkout pool's members in use, free and
 * starting, its takers waiting, and what befell takes and members. None is
 * written when no pool is a checkout pool. Built into shoald only.
 */
#include <inttypes.h>
#include <stdio.h>

#include "host/metrics.h"

static uint64_t get_in_use(const shoal_pool_stats_t *st) { return st->in_use; }
static uint64_t get_free(const shoal_pool_stats_t *st) { return st->free; }
static uint64_t get_starting(const shoal_pool_stats_t *st) { return st->starting; }
static uint64_t get_queued(const shoal_pool_stats_t *st) { return st->queued; }
static uint64_t get_takes(const shoal_pool_stats_t *st) { return st->takes; }
static uint64_t get_no_members(const shoal_pool_stats_t *st) { return st->error_no_members; }
static uint64_t get_timeouts(const shoal_pool_stats_t *st) { return st->take_timeouts; }
static uint64_t get_lease(const shoal_pool_stats_t *st) { return st->lease_expired; }
static uint64_t get_culled(const shoal_pool_stats_t *st) { return st->culled; }
static uint64_t get_recycled(const shoal_pool_stats_t *st) { return st->recycled; }
static uint64_t get_start_failed(const shoal_pool_stats_t *st) { return st->start_failures; }

static const struct {
    const char *name, *type, *help;
    uint64_t (*get)(const shoal_pool_stats_t *);
} series[] = {
    {"shoal_checkout_members_in_use", "gauge", "Members a consumer holds now.", get_in_use},
    {"shoal_checkout_members_free", "gauge", "Members free to be taken now.", get_free},
    {"shoal_checkout_members_starting", "gauge", "Members whose init has not ended yet.",
     get_starting},
    {"shoal_checkout_takers_waiting", "gauge",
     "Takers (and transactions) waiting for a member now (at most queue_max takers).", get_queued},
    {"shoal_checkout_takes_total", "counter",
     "Members given to a consumer or a transaction (the take rate is its rate).", get_takes},
    {"shoal_checkout_no_members_total", "counter",
     "Takes and transactions refused with SHOAL_ENOMEMBERS: none free, the queue full.",
     get_no_members},
    {"shoal_checkout_take_timeouts_total", "counter",
     "Takers whose wait for a member ended unanswered (SHOAL_ETIMEDOUT).", get_timeouts},
    {"shoal_checkout_lease_expired_total", "counter",
     "Members a thread held past the lease: destroyed and replaced.", get_lease},
    {"shoal_checkout_culled_total", "counter",
     "Free members ended after max_age unused (down to init).", get_culled},
    {"shoal_checkout_recycled_total", "counter",
     "Members replaced past max_lifetime (when returned, or found free).", get_recycled},
    {"shoal_checkout_start_failures_total", "counter",
     "Members whose init failed or did not end within member_start_timeout.", get_start_failed},
};

void shoal__metrics_render_checkout(shoal_metrics_buf_t *b, const shoal_metrics_view_t *v, size_t n)
{
    size_t ncheckout = 0;
    for (size_t k = 0; k < n; k++)
        ncheckout += v[k].st.kind == SHOAL_POOL_KIND_CHECKOUT;
    if (ncheckout == 0)
        return;
    for (size_t f = 0; f < sizeof series / sizeof series[0]; f++) {
        shoal__metrics_family(b, series[f].name, series[f].type, series[f].help);
        for (size_t k = 0; k < n; k++)
            if (v[k].st.kind == SHOAL_POOL_KIND_CHECKOUT)
                shoal__metrics_put(b, "%s{pool=\"%s\"} %" PRIu64 "\n", series[f].name, v[k].label,
                                   series[f].get(&v[k].st));
    }
    shoal__metrics_family(b, "shoal_checkout_returns_total", "counter",
                          "Members given back, by how: ok (kept), fail (replaced).");
    for (size_t k = 0; k < n; k++)
        if (v[k].st.kind == SHOAL_POOL_KIND_CHECKOUT)
            shoal__metrics_put(b,
                               "shoal_checkout_returns_total{pool=\"%s\",how=\"ok\"} %" PRIu64 "\n"
                               "shoal_checkout_returns_total{pool=\"%s\",how=\"fail\"} %" PRIu64
                               "\n",
                               v[k].label, v[k].st.returned_ok, v[k].label, v[k].st.returned_fail);
    shoal__metrics_family(b, "shoal_checkout_members_killed_total", "counter",
                          "Members that ended by themselves, by when: free, or in use (or "
                          "destroyed because their consumer crashed).");
    for (size_t k = 0; k < n; k++)
        if (v[k].st.kind == SHOAL_POOL_KIND_CHECKOUT)
            shoal__metrics_put(
                b,
                "shoal_checkout_members_killed_total{pool=\"%s\",when=\"free\"} %" PRIu64 "\n"
                "shoal_checkout_members_killed_total{pool=\"%s\",when=\"in_use\"} %" PRIu64 "\n",
                v[k].label, v[k].st.killed_free, v[k].label, v[k].st.killed_in_use);
    static const struct {
        const char *name, *help;
    } waits[2] = {
        {"shoal_checkout_take_wait_p50_seconds",
         "The median wait of a take for a member (a histogram bucket's upper bound, within 25%)."},
        {"shoal_checkout_take_wait_p99_seconds",
         "The 99th percentile wait of a take for a member (a bucket's upper bound, within 25%)."},
    };
    for (int i = 0; i < 2; i++) {
        shoal__metrics_family(b, waits[i].name, "gauge", waits[i].help);
        for (size_t k = 0; k < n; k++) {
            if (v[k].st.kind != SHOAL_POOL_KIND_CHECKOUT)
                continue;
            uint64_t ns = v[k].st.take_wait_ns[i];
            shoal__metrics_put(b, "%s{pool=\"%s\"} %" PRIu64 ".%09" PRIu64 "\n", waits[i].name,
                               v[k].label, ns / 1000000000u, ns % 1000000000u);
        }
    }
}
