/* autoscale.c - a pool that sizes itself (shoal/pool.h: elastic pools,
 * autoscale): at each tick (elastic.c) the pool's actor reads its counters,
 * turns the difference since the last tick into three signals, and decides.
 *
 *   busy       the members' timed turns (actor/group.h: timed; the
 *              stripes' busy_ns) over wall time x the workers it had;
 *   wait_p99   the 99th percentile of the sampled queue waits that came in
 *              since (the histograms' buckets, differenced);
 *   refused    sends refused per second (messages_unhandled).
 *
 * Pressure for up_for_ms grows the pool at once to the size the load
 * needs: at least up_step more, and as many as make the busy ratio the
 * target (midway between the busy thresholds), judged both from the busy
 * ratio itself and from the offered load (accepted + refused per second x
 * the mean time a message took: Little's law). Calm for down_idle_ms
 * shrinks it by down_step, never to where the busy ratio would pass the
 * target. Between the thresholds nothing moves; after any change of size
 * (a decision, or a command: shoal__pool_resized_by_hand) nothing is
 * decided for cooldown_ms. Every decision is one log line naming the
 * signals and their values. Runs in the pool actor's turns only.
 */
#include "pool/elastic.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "runtime/runtime.h"

/* The readings of one tick. */
typedef struct reading_s {
    uint64_t dt_ns;
    uint32_t busy;       /* permille, at most 1000 */
    bool wait_known;     /* enough samples for a p99 */
    uint64_t wait_us;    /* p99 */
    uint64_t refused;    /* per second */
    uint64_t offered;    /* accepted + refused per second */
    uint64_t per_msg_ns; /* busy time per settled message, 0: none settled */
} reading_t;

static void read_sums(shoal_pool_t *p, uint64_t *busy, uint64_t *fwd, uint64_t *unh,
                      uint64_t *settled, uint64_t wait[SHOAL_HIST_BUCKETS])
{
    *busy = *fwd = *unh = *settled = 0;
    for (uint32_t s = 0; s < p->nstripes; s++) {
        const shoal_pool_stripe_t *x = &p->stripes[s];
        *busy += atomic_load_explicit(&x->busy_ns, memory_order_relaxed);
        *fwd += atomic_load_explicit(&x->forwarded, memory_order_relaxed);
        *unh += atomic_load_explicit(&x->unhandled, memory_order_relaxed);
        *settled += atomic_load_explicit(&x->handled, memory_order_relaxed) +
                    atomic_load_explicit(&x->failed, memory_order_relaxed);
    }
    shoal_pool_hist_t h;
    shoal__pool_hist(p, &h);
    memcpy(wait, h.wait, sizeof h.wait);
}

static uint64_t diff(uint64_t now, uint64_t then) { return now > then ? now - then : 0; }

/* Reads the signals since the last tick into *r, and keeps the sums for
 * the next. False on the first tick (nothing to difference yet). */
static bool measure(shoal_pool_t *p, shoal_autoscale_state_t *as, uint64_t now, reading_t *r)
{
    uint64_t busy, fwd, unh, settled, wait[SHOAL_HIST_BUCKETS];
    read_sums(p, &busy, &fwd, &unh, &settled, wait);
    bool primed = as->primed;
    memset(r, 0, sizeof *r);
    if (primed && now > as->at_ns) {
        r->dt_ns = now - as->at_ns;
        uint64_t live = as->live != 0 ? as->live : 1;
        uint64_t b = diff(busy, as->busy_ns);
        uint64_t permille = b * 1000u / (r->dt_ns * live);
        r->busy = permille > 1000 ? 1000 : (uint32_t)permille;
        uint64_t d[SHOAL_HIST_BUCKETS], n = 0;
        for (unsigned i = 0; i < SHOAL_HIST_BUCKETS; i++)
            n += d[i] = diff(wait[i], as->wait[i]);
        r->wait_known = n >= 4;
        if (r->wait_known)
            r->wait_us = shoal__hist_percentile(d, 990) / 1000u;
        uint64_t refused = diff(unh, as->unhandled), accepted = diff(fwd, as->forwarded);
        r->refused = refused * 1000000000u / r->dt_ns;
        r->offered = (accepted + refused) * 1000000000u / r->dt_ns;
        uint64_t done = diff(settled, as->settled);
        r->per_msg_ns = done != 0 ? b / done : 0;
    }
    as->primed = true;
    as->at_ns = now;
    as->busy_ns = busy;
    as->forwarded = fwd;
    as->unhandled = unh;
    as->settled = settled;
    memcpy(as->wait, wait, sizeof wait);
    return primed && r->dt_ns != 0;
}

static bool pressure(const shoal_pool_autoscale_t *a, const reading_t *r)
{
    return ((a->when & SHOAL_AUTOSCALE_BUSY) && r->busy > a->up_busy) ||
           ((a->when & SHOAL_AUTOSCALE_WAIT) && r->wait_known && r->wait_us > a->up_wait_us) ||
           ((a->when & SHOAL_AUTOSCALE_REFUSED) && r->refused > a->up_refused);
}

static bool calm(const shoal_pool_autoscale_t *a, const reading_t *r)
{
    return (!(a->when & SHOAL_AUTOSCALE_BUSY) || r->busy <= a->down_busy) &&
           (!(a->when & SHOAL_AUTOSCALE_WAIT) || !r->wait_known || r->wait_us <= a->down_wait_us) &&
           (!(a->when & SHOAL_AUTOSCALE_REFUSED) || r->refused <= a->down_refused);
}

void shoal__autoscale_pct(uint32_t permille, char *buf, size_t size)
{
    if (permille % 10 == 0)
        snprintf(buf, size, "%" PRIu32 "%%", permille / 10);
    else
        snprintf(buf, size, "%" PRIu32 ".%" PRIu32 "%%", permille / 10, permille % 10);
}

/* The signals named in `when`, as a log line shows them: "busy 97.5% >
 * 80%, refused 120/s > 0/s" (up: the thresholds of pressure; down: of
 * calm). */
static void signals(const shoal_pool_autoscale_t *a, const reading_t *r, bool up, char *buf,
                    size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    if ((a->when & SHOAL_AUTOSCALE_BUSY) && n < size) {
        char th_text[16];
        shoal__autoscale_pct(up ? a->up_busy : a->down_busy, th_text, sizeof th_text);
        n += (size_t)snprintf(
            buf + n, size - n, "busy %" PRIu32 ".%" PRIu32 "%% %s %s", r->busy / 10, r->busy % 10,
            up ? (r->busy > a->up_busy ? ">" : "<=") : (r->busy <= a->down_busy ? "<=" : ">"),
            th_text);
    }
    if ((a->when & SHOAL_AUTOSCALE_WAIT) && n < size) {
        uint64_t th = up ? a->up_wait_us : a->down_wait_us;
        if (r->wait_known)
            n += (size_t)snprintf(buf + n, size - n, "%swait_p99 %" PRIu64 "us %s %" PRIu64 "us",
                                  n ? ", " : "", r->wait_us, r->wait_us > th ? ">" : "<=", th);
        else
            n += (size_t)snprintf(buf + n, size - n, "%swait_p99 - (few samples)", n ? ", " : "");
    }
    if ((a->when & SHOAL_AUTOSCALE_REFUSED) && n < size) {
        uint64_t th = up ? a->up_refused : a->down_refused;
        snprintf(buf + n, size - n, "%srefused %" PRIu64 "/s %s %" PRIu64 "/s", n ? ", " : "",
                 r->refused, r->refused > th ? ">" : "<=", th);
    }
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return b != 0 ? (a + b - 1) / b : 0; }

/* The busy ratio autoscale aims at: midway between its thresholds. */
static uint32_t target_busy(const shoal_pool_autoscale_t *a)
{
    uint32_t t = (a->up_busy + a->down_busy) / 2;
    return t != 0 ? t : 1;
}

static void grow(struct shoal_ctx_s *ctx, shoal_pool_t *p, const reading_t *r, uint64_t now)
{
    const shoal_pool_autoscale_t *a = &p->spec.autoscale;
    shoal_autoscale_state_t *as = &p->el->as;
    uint32_t from = p->target, t = target_busy(a);
    uint64_t want = (uint64_t)from + a->up_step;
    uint64_t by_busy = ceil_div((uint64_t)as->live * r->busy, t);
    /* Little's law: messages a second x seconds a message = busy workers. */
    uint64_t by_load =
        r->per_msg_ns != 0 ? ceil_div(r->offered * r->per_msg_ns / 1000u, (uint64_t)t * 1000u) : 0;
    want = by_busy > want ? by_busy : want;
    want = by_load > want ? by_load : want;
    uint32_t to = shoal__pool_resize(ctx, p, want);
    if (to <= from)
        return;
    p->ups++;
    as->changed_at = now;
    char why[256];
    signals(a, r, true, why, sizeof why);
    shoal__log(ctx->rt, SHOAL_LOG_INFO, ctx->self, p->name,
               "autoscale: up %" PRIu32 " -> %" PRIu32 " workers: %s for %" PRIu64
               " ms (offered %" PRIu64 "/s, %" PRIu64 " us a message: %" PRIu64
               " workers at %" PRIu32 "%% busy)",
               from, to, why, (now - as->pressure_since) / 1000000u, r->offered,
               r->per_msg_ns / 1000u, by_load > by_busy ? by_load : by_busy, t / 10);
    as->pressure_since = as->calm_since = 0;
}

static void shrink(struct shoal_ctx_s *ctx, shoal_pool_t *p, const reading_t *r, uint64_t now)
{
    const shoal_pool_autoscale_t *a = &p->spec.autoscale;
    shoal_autoscale_state_t *as = &p->el->as;
    uint32_t from = p->target;
    uint64_t want = from > a->down_step ? from - a->down_step : 0;
    /* Not below what the load needs: the workers left at no more than the
     * target busy ratio. A step that would go past it goes as far as that
     * (a pool at 5 whose load needs 2 goes to 2 with a step of 4; refusing
     * the step left it at 5 for good). */
    uint64_t need = ceil_div((uint64_t)r->busy * as->live, target_busy(a));
    if (want < need)
        want = need;
    if (want < p->spec.min_size)
        want = p->spec.min_size;
    if (want == 0) /* never to none: down to one (min_size 0 is idle expiry's) */
        want = 1;
    if (want >= from)
        return;
    uint32_t to = shoal__pool_resize(ctx, p, want);
    if (to >= from)
        return;
    p->downs++;
    as->changed_at = now;
    char why[256];
    signals(a, r, false, why, sizeof why);
    shoal__log(ctx->rt, SHOAL_LOG_INFO, ctx->self, p->name,
               "autoscale: down %" PRIu32 " -> %" PRIu32 " workers: calm for %" PRIu64 " ms (%s)",
               from, to, (now - as->calm_since) / 1000000u, why);
    as->pressure_since = as->calm_since = 0;
}

void shoal__autoscale_tick(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t now)
{
    shoal_autoscale_state_t *as = &p->el->as;
    const shoal_pool_autoscale_t *a = &p->spec.autoscale;
    reading_t r;
    bool have = measure(p, as, now, &r);
    if (have) {
        atomic_store_explicit(&p->pub_busy, r.busy, memory_order_relaxed);
        atomic_store_explicit(&p->pub_wait_us, r.wait_known ? r.wait_us : 0, memory_order_relaxed);
        atomic_store_explicit(&p->pub_refused_ps, r.refused, memory_order_relaxed);
    }
    bool hot = have && pressure(a, &r), cool = have && !hot && calm(a, &r);
    /* Counted from the first reading that showed it (not from the start
     * of its window: pressure may have come at its end), so `for` is
     * pressure at every reading for that long. */
    as->pressure_since = hot ? (as->pressure_since ? as->pressure_since : now) : 0;
    as->calm_since = cool ? (as->calm_since ? as->calm_since : now) : 0;
    bool cooling = as->changed_at != 0 && now - as->changed_at < shoal__ms_to_ns(a->cooldown_ms);
    if (have && !cooling && p->state == SHOAL_POOL_RUNNING) {
        if (hot && now - as->pressure_since >= shoal__ms_to_ns(a->up_for_ms) &&
            p->target < p->spec.max_size)
            grow(ctx, p, &r, now);
        else if (cool && now - as->calm_since >= shoal__ms_to_ns(a->down_idle_ms) &&
                 p->target > p->spec.min_size)
            shrink(ctx, p, &r, now);
    }
    as->live = shoal__pool_live(p);
}

void shoal__pool_resized_by_hand(shoal_pool_t *p)
{
    if (p->el == NULL)
        return;
    p->el->as.changed_at = shoal__now_ns();
    p->el->as.pressure_since = p->el->as.calm_since = 0;
}
