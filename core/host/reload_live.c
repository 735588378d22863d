/* reload_live.c - what a reload changes in a pool that keeps running (its
 * PID and, unless its code or args changed, its workers): its bounds, its
 * elastic settings (idle_timeout, max_waiting, autoscale), its size, its
 * workers' mailbox limit, its strategy, a pull pool's prefetch and
 * buffer, and a checkout pool's init, max and settings. The same walk says what would change (a
 * reload's plan, shoald
 * --check --diff, shoalctl diff) and changes it (the commit). Host thread.
 */
#include "host/host.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pool/pool.h"
#include "shoal/checkout.h"

/* Appends "; "-separated text to buf (of size, holding *len). */
static void add(char *buf, size_t size, size_t *len, const char *fmt, ...) SHOAL_PRINTF(4, 5);
static void add(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
    if (*len + 3 >= size)
        return;
    if (*len != 0) {
        memcpy(buf + *len, "; ", 3);
        *len += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, size - *len, fmt, ap);
    va_end(ap);
    if (n > 0)
        *len = *len + (size_t)n < size ? *len + (size_t)n : size - 1;
}

uint64_t shoal__host_live_ms(const shoal_host_live_t *lv)
{
    uint64_t now = shoal__now_ns();
    return now >= lv->by_ns ? 1 : (lv->by_ns - now + 999999) / 1000000;
}

int shoal__host_live_rc(shoal_host_live_t *lv, int rc)
{
    if (rc == SHOAL_ETIMEDOUT)
        lv->unanswered++;
    return rc;
}

/* lv->by_ns set: made (a call's result, counted), else only said. */
#define MADE(lv, call) ((lv)->by_ns != 0 ? shoal__host_live_rc((lv), (call)) : SHOAL_OK)

bool shoal__host_sizes_itself(const shoal_config_pool_t *cp)
{
    return cp->autoscale.when != 0 || cp->idle_timeout_ms != 0 || cp->max_waiting != 0;
}

bool shoal__host_keeps_size(const shoal_config_pool_t *was, const shoal_config_pool_t *cp,
                            uint32_t run)
{
    if (!shoal__host_sizes_itself(cp))
        return false;
    /* A size the file does not write (autoscale.min's, or the default)
     * never changed in it: a reload of min 1 -> 2 kept 14 workers at 2. */
    if ((was->size_given || cp->size_given) && was->size != cp->size)
        return false;
    /* No worker, and nothing in cp's settings would start one: the file's
     * size (at least 1: the config refuses 0 for such a pool). */
    return run != 0 || !shoal__pool_stays_empty(cp->autoscale.when, cp->idle_timeout_ms,
                                                shoal__config_pool_fed(cp));
}

static bool same_elastic(const shoal_config_pool_t *a, const shoal_config_pool_t *b)
{
    return a->idle_timeout_ms == b->idle_timeout_ms && a->max_waiting == b->max_waiting &&
           memcmp(&a->autoscale, &b->autoscale, sizeof a->autoscale) == 0;
}

/* The members' (workers') mailbox limit, every kind. */
static void mailbox_live(shoal_host_t *h, shoal_host_pool_t *hp, const shoal_config_pool_t *cp,
                         shoal_host_live_t *lv, const shoal_pool_stats_t *st, char *buf,
                         size_t size, size_t *len)
{
    if (cp->mailbox == st->mailbox)
        return;
    char a[24], b[24];
    shoal__host_mailbox_text(st->mailbox, a);
    shoal__host_mailbox_text(cp->mailbox, b);
    int r = MADE(lv, shoal_pool_set_mailbox(h->rt, hp->pid, cp->mailbox, shoal__host_live_ms(lv)));
    add(buf, size, len, "%s mailbox %s -> %s%s", hp->name, a, b, r < 0 ? " (failed)" : "");
}

/* A checkout pool's init, max and settings (its code, args and group are
 * the same: else reload.c replaces it), by SHOAL_POOL_SET_CHECKOUT: in one
 * call, so the pool never runs with half of them. */
static void strategy_live(shoal_host_t *h, shoal_host_pool_t *hp, const shoal_config_pool_t *cp,
                          shoal_host_live_t *lv, const shoal_pool_stats_t *st, char *buf,
                          size_t size, size_t *len)
{
    if ((uint32_t)cp->strategy == st->strategy)
        return;
    int r = MADE(lv, shoal_pool_set_strategy(h->rt, hp->pid, (uint32_t)cp->strategy,
                                             shoal__host_live_ms(lv)));
    add(buf, size, len, "%s strategy %s -> %s%s", hp->name, shoal__pool_strategy_name(st->strategy),
        shoal__pool_strategy_name((uint32_t)cp->strategy), r < 0 ? " (failed)" : "");
}

/* One checkout setting that changed, as "KEY A -> B" after ", " when
 * *len is not 0 (a duration in ms; zero_never: 0 reads "never"). */
static void setting(char *buf, size_t size, size_t *len, const char *key, uint64_t a, uint64_t b,
                    const char *unit, bool zero_never)
{
    if (a == b || *len + 1 >= size)
        return;
    char x[32] = "never", y[32] = "never";
    if (!zero_never || a != 0)
        snprintf(x, sizeof x, "%" PRIu64 "%s", a, unit);
    if (!zero_never || b != 0)
        snprintf(y, sizeof y, "%" PRIu64 "%s", b, unit);
    int n = snprintf(buf + *len, size - *len, "%s%s %s -> %s", *len ? ", " : "", key, x, y);
    if (n > 0)
        *len = *len + (size_t)n < size ? *len + (size_t)n : size - 1;
}

static void checkout_live(shoal_host_t *h, shoal_host_pool_t *hp, const shoal_config_pool_t *cp,
                          shoal_host_live_t *lv, const shoal_pool_stats_t *st, char *buf,
                          size_t size, size_t *len)
{
    const shoal_pool_checkout_t *a = &hp->cp->checkout, *b = &cp->checkout;
    /* What changed, and only that: init and max as the pool runs them
     * (a command may have moved them), the settings field by field (not
     * the struct's padding; the group is reload.c's). A field added to the
     * SDK's struct trips this, so it is compared too. */
    _Static_assert(sizeof(shoal_pool_checkout_t) == 72, "compare every checkout setting below");
    char what[512] = "";
    size_t n = 0;
    setting(what, sizeof what, &n, "init", st->target_size, cp->size, "", false);
    setting(what, sizeof what, &n, "max", st->max_size, cp->max_size, "", false);
    setting(what, sizeof what, &n, "add_member_retry", a->add_member_retry, b->add_member_retry, "",
            false);
    setting(what, sizeof what, &n, "member_start_timeout", a->member_start_timeout_ms,
            b->member_start_timeout_ms, "ms", false);
    setting(what, sizeof what, &n, "cull_interval", a->cull_interval_ms, b->cull_interval_ms, "ms",
            true);
    setting(what, sizeof what, &n, "max_age", a->max_age_ms, b->max_age_ms, "ms", false);
    setting(what, sizeof what, &n, "max_lifetime", a->max_lifetime_ms, b->max_lifetime_ms, "ms",
            true);
    setting(what, sizeof what, &n, "max_lifetime_jitter", a->max_lifetime_jitter_ms,
            b->max_lifetime_jitter_ms, "ms", false);
    setting(what, sizeof what, &n, "queue_max", a->queue_max, b->queue_max, "", false);
    setting(what, sizeof what, &n, "lease", a->lease_ms, b->lease_ms, "ms", false);
    if (n == 0)
        return;
    shoal_pool_checkout_update_t u = {cp->size, cp->max_size, cp->checkout};
    int r = MADE(lv, shoal_pool_set_checkout(h->rt, hp->pid, &u, shoal__host_live_ms(lv)));
    add(buf, size, len, "%s %s%s", hp->name, what, r < 0 ? " (failed)" : "");
}

static void bounds_live(shoal_host_t *h, shoal_host_pool_t *hp, const shoal_config_pool_t *cp,
                        shoal_host_live_t *lv, const shoal_pool_stats_t *st, char *buf, size_t size,
                        size_t *len)
{
    int r = MADE(lv, shoal_pool_set_bounds(h->rt, hp->pid, cp->min_size, cp->max_size,
                                           shoal__host_live_ms(lv)));
    add(buf, size, len, "%s bounds %u..%u -> %u..%u%s", hp->name, st->min_size, st->max_size,
        cp->min_size, cp->max_size, r < 0 ? " (failed)" : "");
}

void shoal__host_live(shoal_host_t *h, shoal_host_pool_t *hp, const shoal_config_pool_t *cp,
                      shoal_host_live_t *lv, char *buf, size_t size)
{
    const shoal_config_pool_t *cp0 = hp->cp; /* the config it runs from now */
    size_t len = 0;
    buf[0] = '\0';
    shoal_pool_stats_t st; /* what it runs with: commands may have moved it since */
    shoal__host_peek(hp, &st);
    /* Read by the host's watch from the pool's config (host_watch.c): it
     * holds from the commit on, nothing to apply. */
    if (cp->warn_queue != cp0->warn_queue)
        add(buf, size, &len, "%s warn_queue %" PRIu64 " -> %" PRIu64, hp->name, cp0->warn_queue,
            cp->warn_queue);
    if (cp->kind == SHOAL_POOL_KIND_CHECKOUT) {
        checkout_live(h, hp, cp, lv, &st, buf, size, &len);
        strategy_live(h, hp, cp, lv, &st, buf, size, &len);
        mailbox_live(h, hp, cp, lv, &st, buf, size, &len);
        return;
    }
    /* Bounds before the size set below, which must fall within them; and
     * before the elastic settings, but when the max grows: then after
     * them, or a pool that grows by itself (idle_timeout) and is told to
     * stop doing so would first grow towards the new max -- a pull pool
     * went from 3 to 321 workers that way, then kept them. */
    bool bounds = st.min_size != cp->min_size || st.max_size != cp->max_size;
    bool elastic = !same_elastic(cp0, cp);
    bool elastic_first = bounds && cp->max_size > st.max_size && elastic;
    if (bounds && !elastic_first)
        bounds_live(h, hp, cp, lv, &st, buf, size, &len);
    if (elastic) {
        shoal_pool_elastic_t el = {cp->idle_timeout_ms, cp->max_waiting, cp->autoscale};
        int r = MADE(lv, shoal_pool_set_elastic(h->rt, hp->pid, &el, shoal__host_live_ms(lv)));
        char as[400];
        shoal__config_autoscale_text(&cp->autoscale, as, sizeof as);
        add(buf, size, &len,
            "%s idle_timeout %" PRIu64 "ms -> %" PRIu64 "ms, max_waiting %u -> %u, autoscale %s%s",
            hp->name, cp0->idle_timeout_ms, cp->idle_timeout_ms, cp0->max_waiting, cp->max_waiting,
            as, r < 0 ? " (failed)" : "");
    }
    if (elastic_first)
        bounds_live(h, hp, cp, lv, &st, buf, size, &len);
    /* A pool that sizes itself keeps the size it has (shoal__host_keeps_size);
     * any other is set to the file's. The size read again once its new
     * elastic settings hold: until then it may have grown by itself. */
    if (elastic && lv->by_ns != 0)
        shoal__host_peek(hp, &st);
    uint32_t run_size = st.target_size;
    if (!shoal__host_keeps_size(cp0, cp, run_size) && cp->size != run_size) {
        int r = MADE(lv, shoal_pool_set_size(h->rt, hp->pid, cp->size, shoal__host_live_ms(lv)));
        add(buf, size, &len, "%s size %u -> %u%s", hp->name, run_size, cp->size,
            r < 0 ? " (failed)" : "");
    }
    mailbox_live(h, hp, cp, lv, &st, buf, size, &len);
    strategy_live(h, hp, cp, lv, &st, buf, size, &len);
    char pull[300]; /* prefetch, buffer */
    shoal__host_pull_live(h, hp, cp, lv, pull, sizeof pull);
    if (pull[0] != '\0')
        add(buf, size, &len, "%s", pull);
}
