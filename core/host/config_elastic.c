/* config_elastic.c - the keys of elastic pools (shoal/pool.h): idle_timeout,
 * max_waiting and autoscale. config.c reads the plain numbers and durations
 * from the schema table (schema.c) and keeps autoscale's `when` nodes; here,
 * once a pool's keys are read, they are refused where they do not apply,
 * the conditions are parsed, and autoscale's min and max become the pool's
 * bounds. Every error names file:line:column. See config.h.
 *
 * A condition is `SIGNAL OP VALUE`:
 *   busy      a percentage: busy > 80%, busy < 37.5%
 *   wait_p99  a duration: wait_p99 > 5ms, wait_p99 < 500us
 *   refused   sends refused a second: refused > 0, refused > 100/s
 * up.when takes > (or >=): pressure when any holds; down.when takes < (or
 * <=), only on signals up.when names: calm when all hold. A signal up.when
 * names and down.when does not is calm at half its up threshold.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/config.h"
#include "pool/pool.h"
#include "pool/elastic.h"

/* The key node called name in map, or NULL. */
static const shoal_node_t *key_node(const shoal_node_t *map, const char *name)
{
    for (size_t i = 0; map != NULL && map->kind == SHOAL_NODE_MAP && i < map->n; i++)
        if (strcmp(map->keys[i]->text, name) == 0)
            return map->keys[i];
    return NULL;
}

enum { SIG_BUSY = 0, SIG_WAIT = 1, SIG_REFUSED = 2, NSIG = 3 };
static const char *const sig_names[NSIG] = {"busy", "wait_p99", "refused"};
static const uint32_t sig_bits[NSIG] = {SHOAL_AUTOSCALE_BUSY, SHOAL_AUTOSCALE_WAIT,
                                        SHOAL_AUTOSCALE_REFUSED};

/* One parsed condition. */
typedef struct cond_s {
    int sig;
    bool greater, or_equal;
    uint64_t value; /* busy: permille; wait_p99: us; refused: per second */
} cond_t;

/* A decimal number with at most 3 digits after the point, times 1000 (so
 * "37.5" is 37500); *end after it. False if there is none. */
static bool milli(const char *s, uint64_t *out, const char **end)
{
    uint64_t whole = 0, frac = 0;
    unsigned digits = 0, fdigits = 0;
    while (isdigit((unsigned char)*s) && whole < UINT64_C(1) << 40) {
        whole = whole * 10 + (uint64_t)(*s++ - '0');
        digits++;
    }
    if (*s == '.') {
        s++;
        while (isdigit((unsigned char)*s)) {
            if (fdigits < 3) {
                frac = frac * 10 + (uint64_t)(*s - '0');
                fdigits++;
            }
            s++;
        }
        if (fdigits == 0)
            return false;
    }
    if (digits == 0 || isdigit((unsigned char)*s))
        return false;
    while (fdigits++ < 3)
        frac *= 10;
    *out = whole * 1000 + frac;
    *end = s;
    return true;
}

static const char *skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* Parses one condition from the scalar n (`what`: "up.when" or
 * "down.when", at path). */
static int parse_cond(shoal_diag_t *err, const shoal_node_t *n, const char *path, bool up,
                      cond_t *c)
{
    const char *example = up ? "busy > 80%, wait_p99 > 5ms or refused > 0"
                             : "busy < 40%, wait_p99 < 2ms or refused < 1";
    const char *where = up ? "up.when" : "down.when";
    if (n->kind != SHOAL_NODE_SCALAR)
        return shoal__node_fail(err, n, "%s.autoscale.%s: expected a condition like %s, got %s",
                                path, where, example, shoal__node_kind_name(n));
    const char *s = skip_space(n->text), *name = s;
    while (isalnum((unsigned char)*s) || *s == '_')
        s++;
    size_t len = (size_t)(s - name);
    c->sig = -1;
    for (int i = 0; i < NSIG; i++)
        if (strlen(sig_names[i]) == len && strncmp(name, sig_names[i], len) == 0)
            c->sig = i;
    if (c->sig < 0)
        return shoal__node_fail(err, n,
                                "%s.autoscale.%s: '%s': the signal is busy, wait_p99 or refused "
                                "(e.g. %s)",
                                path, where, n->text, example);
    s = skip_space(s);
    c->greater = *s == '>';
    if (*s != '>' && *s != '<')
        return shoal__node_fail(err, n, "%s.autoscale.%s: '%s': expected %s after %s", path, where,
                                n->text, up ? "> or >=" : "< or <=", sig_names[c->sig]);
    c->or_equal = s[1] == '=';
    s = skip_space(s + 1 + c->or_equal);
    if (c->greater != up)
        return shoal__node_fail(err, n,
                                "%s.autoscale.%s: '%s': %s conditions say %s (pressure is a signal "
                                "above its threshold, calm one below it)",
                                path, where, n->text, where, up ? "> or >=" : "< or <=");
    uint64_t m;
    const char *end;
    bool ok = milli(s, &m, &end);
    const char *unit = ok ? skip_space(end) : s;
    size_t ulen = strlen(unit);
    while (ulen > 0 && (unit[ulen - 1] == ' ' || unit[ulen - 1] == '\t'))
        ulen--;
    if (ok && c->sig == SIG_BUSY && ulen == 1 && unit[0] == '%' && m <= 100000) {
        c->value = m / 100; /* percent x 1000 -> permille */
        if (m % 100 != 0)
            ok = false; /* finer than 0.1% */
    } else if (ok && c->sig == SIG_WAIT && ulen == 2 && strncmp(unit, "us", 2) == 0) {
        c->value = m / 1000;
        ok = m % 1000 == 0;
    } else if (ok && c->sig == SIG_WAIT && ulen == 2 && strncmp(unit, "ms", 2) == 0) {
        c->value = m;
    } else if (ok && c->sig == SIG_WAIT && ulen == 1 && unit[0] == 's') {
        c->value = m * 1000;
    } else if (ok && c->sig == SIG_REFUSED && m % 1000 == 0 &&
               (ulen == 0 || (ulen == 2 && strncmp(unit, "/s", 2) == 0))) {
        c->value = m / 1000;
    } else {
        ok = false;
    }
    if (!ok)
        return shoal__node_fail(err, n, "%s.autoscale.%s: '%s': expected %s", path, where, n->text,
                                c->sig == SIG_BUSY ? "a percentage, 0% to 100% (e.g. 80% or 82.5%)"
                                : c->sig == SIG_WAIT ? "a duration (e.g. 5ms, 500us or 1.5s)"
                                                     : "sends a second (e.g. 0, 100 or 100/s)");
    return SHOAL_OK;
}

/* The conditions of a `when:` node (a scalar or a list), into c[NSIG]
 * (by signal; seen[i]: named). */
static int parse_when(shoal_diag_t *err, const shoal_node_t *when, const char *path, bool up,
                      cond_t c[NSIG], const shoal_node_t *at[NSIG])
{
    const char *where = up ? "up.when" : "down.when";
    if (when->kind == SHOAL_NODE_LIST && when->n == 0)
        return shoal__node_fail(err, when, "%s.autoscale.%s: the list is empty: name a condition",
                                path, where);
    if (when->kind != SHOAL_NODE_LIST && when->kind != SHOAL_NODE_SCALAR)
        return shoal__node_fail(err, when,
                                "%s.autoscale.%s: expected a condition or a list of them, got %s",
                                path, where, shoal__node_kind_name(when));
    size_t n = when->kind == SHOAL_NODE_LIST ? when->n : 1;
    for (size_t i = 0; i < n; i++) {
        const shoal_node_t *item = when->kind == SHOAL_NODE_LIST ? when->items[i] : when;
        cond_t one;
        int rc = parse_cond(err, item, path, up, &one);
        if (rc != SHOAL_OK)
            return rc;
        if (at[one.sig] != NULL)
            return shoal__node_fail(
                err, item, "%s.autoscale.%s: %s is named twice (first at line %" PRIu32 ")", path,
                where, sig_names[one.sig], at[one.sig]->line);
        c[one.sig] = one;
        at[one.sig] = item;
    }
    return SHOAL_OK;
}

/* A threshold as the pool's actor compares it: pressure is value > up,
 * calm is value <= down. */
static uint64_t up_threshold(const cond_t *c)
{
    return c->or_equal && c->value > 0 ? c->value - 1 : c->value;
}

static int down_threshold(shoal_diag_t *err, const shoal_node_t *at, const char *path,
                          const cond_t *c, uint64_t *out)
{
    if (c->or_equal) {
        *out = c->value;
        return SHOAL_OK;
    }
    if (c->value == 0)
        return shoal__node_fail(err, at,
                                "%s.autoscale.down.when: '%s' never holds (nothing is below 0): "
                                "write %s <= 0",
                                path, at->text, sig_names[c->sig]);
    *out = c->value - 1;
    return SHOAL_OK;
}

static int check_autoscale(shoal_diag_t *err, const shoal_node_t *map, const char *path,
                           shoal_config_pool_t *p)
{
    const shoal_node_t *as = shoal__node_get(map, "autoscale");
    shoal_pool_autoscale_t *a = &p->autoscale;
    cond_t up[NSIG], down[NSIG];
    const shoal_node_t *up_at[NSIG] = {NULL}, *down_at[NSIG] = {NULL};
    int rc;
    if (p->up_when_at != NULL) {
        if ((rc = parse_when(err, p->up_when_at, path, true, up, up_at)) != SHOAL_OK)
            return rc;
    } else { /* the default: busy > 80% */
        up[SIG_BUSY] = (cond_t){SIG_BUSY, true, false, 800};
        up_at[SIG_BUSY] = as;
    }
    if (p->down_when_at != NULL &&
        (rc = parse_when(err, p->down_when_at, path, false, down, down_at)) != SHOAL_OK)
        return rc;
    a->when = 0;
    for (int i = 0; i < NSIG; i++) {
        if (down_at[i] != NULL && up_at[i] == NULL)
            return shoal__node_fail(err, down_at[i],
                                    "%s.autoscale.down.when: %s is not one of up.when's signals "
                                    "(calm is judged on what pressure is)",
                                    path, sig_names[i]);
        if (up_at[i] == NULL)
            continue;
        a->when |= sig_bits[i];
        if (up[i].or_equal && up[i].value == 0)
            return shoal__node_fail(err, up_at[i],
                                    "%s.autoscale.up.when: '%s' always holds (nothing is below 0): "
                                    "the pool would only grow",
                                    path, up_at[i]->text);
        uint64_t hi = up_threshold(&up[i]), lo = hi / 2;
        if (down_at[i] != NULL && (rc = down_threshold(err, down_at[i], path, &down[i], &lo)))
            return rc;
        bool below = i == SIG_REFUSED ? lo <= hi : lo < hi;
        if (!below && down_at[i] == NULL) /* hi is 0: no default calm below it */
            return shoal__node_fail(err, up_at[i],
                                    "%s.autoscale.up.when: '%s' leaves no calm below it (nothing "
                                    "is below 0): write a threshold above 0",
                                    path, up_at[i]->text);
        if (!below)
            return shoal__node_fail(err, down_at[i],
                                    "%s.autoscale.down.when: '%s' is not below up.when's %s "
                                    "(between the two nothing moves: that gap is what keeps a "
                                    "steady load from flapping)",
                                    path, down_at[i]->text, sig_names[i]);
        if (i == SIG_BUSY && hi >= 1000)
            return shoal__node_fail(err, up_at[i],
                                    "%s.autoscale.up.when: busy is never above 100%%", path);
        if (i == SIG_BUSY) {
            a->up_busy = (uint32_t)hi;
            a->down_busy = (uint32_t)lo;
        } else if (i == SIG_WAIT) {
            a->up_wait_us = hi;
            a->down_wait_us = lo;
        } else {
            a->up_refused = hi;
            a->down_refused = lo;
        }
    }
    /* The bounds: autoscale's, or the pool's, never both. */
    const shoal_node_t *min_at = key_node(as, "min"), *max_at = key_node(as, "max");
    const shoal_node_t *pmin = key_node(map, "min"), *pmax = key_node(map, "max");
    if (max_at == NULL)
        return shoal__node_fail(err, key_node(map, "autoscale"),
                                "%s.autoscale: missing key 'max' (the most workers it may start)",
                                path);
    if ((min_at != NULL && pmin != NULL) || pmax != NULL) {
        const shoal_node_t *twice = pmax != NULL ? pmax : pmin;
        return shoal__node_fail(err, twice,
                                "%s.%s: the pool's bounds are given once: as autoscale.min and "
                                ".max (line %" PRIu32 ") or here, not both",
                                path, twice->text, max_at->line);
    }
    if (min_at != NULL)
        p->min_size = p->as_min;
    p->max_size = p->as_max;
    if (p->min_size > p->max_size)
        return shoal__node_fail(err, min_at != NULL ? min_at : max_at,
                                "%s.autoscale: min %u is above max %u", path, p->min_size,
                                p->max_size);
    if (key_node(map, "size") == NULL)
        p->size = p->min_size; /* it starts small and grows */
    /* The 0 is size if given, else autoscale.min or the pool's min. */
    const shoal_node_t *zero_at = key_node(map, "size") != NULL ? key_node(map, "size") : min_at;
    bool fed = shoal__config_pool_fed(p);
    if (p->size == 0 && shoal__pool_stays_empty(a->when, p->idle_timeout_ms, fed))
        return shoal__node_fail(
            err, zero_at != NULL ? zero_at : pmin,
            fed ? "%s.autoscale: it would start with no worker and nothing would start one (busy "
                  "stays 0%%, no queue wait is measured, and a pool fed by its own source "
                  "refuses nothing): give size or min >= 1, or idle_timeout (an item starts a "
                  "worker)"
                : "%s.autoscale: it would start with no worker and nothing would start one (busy "
                  "stays 0%% and no queue wait is measured): give size or min >= 1, or "
                  "idle_timeout (a send starts a worker), or up.when on refused",
            path);
    return SHOAL_OK;
}

int shoal__config_elastic_check(shoal_config_t *c, shoal_diag_t *err, const shoal_node_t *map,
                                const char *path, shoal_config_pool_t *p, unsigned depth)
{
    (void)c;
    const shoal_node_t *first = NULL;
    for (size_t i = 0; i < map->n && first == NULL; i++)
        if (strcmp(map->keys[i]->text, "autoscale") == 0 ||
            strcmp(map->keys[i]->text, "idle_timeout") == 0 ||
            strcmp(map->keys[i]->text, "max_waiting") == 0)
            first = map->keys[i];
    if (first == NULL)
        return SHOAL_OK;
    if (depth > 0)
        return shoal__node_fail(err, first,
                                "%s.%s: only a pool under pools: takes %s (a nested pool is "
                                "sized by the pool above it)",
                                path, first->text, first->text);
    if (p->nested != NULL)
        return shoal__node_fail(err, first,
                                "%s.%s: a pool of pools does not take %s (its workers are pools, "
                                "not actors: only a pool under pools: whose worker: is "
                                "PLUGIN.BEHAVIOUR takes it)",
                                path, first->text, first->text);
    if (p->isolation != SHOAL_ISOLATION_NONE)
        return shoal__node_fail(err, first,
                                "%s.%s: not with isolation: process (its workers are in another "
                                "process)",
                                path, first->text);
    if (key_node(map, "autoscale") == NULL)
        return SHOAL_OK;
    return check_autoscale(err, map, path, p);
}

void shoal__config_autoscale_text(const shoal_pool_autoscale_t *a, char *buf, size_t size)
{
    if (a->when == 0) {
        snprintf(buf, size, "off");
        return;
    }
    char up[160] = "", down[160] = "", hi[16], lo[16];
    size_t u = 0, d = 0;
    if (a->when & SHOAL_AUTOSCALE_BUSY) {
        shoal__autoscale_pct(a->up_busy, hi, sizeof hi);
        shoal__autoscale_pct(a->down_busy, lo, sizeof lo);
        u += (size_t)snprintf(up + u, sizeof up - u, "busy > %s", hi);
        d += (size_t)snprintf(down + d, sizeof down - d, "busy <= %s", lo);
    }
    if ((a->when & SHOAL_AUTOSCALE_WAIT) && u < sizeof up && d < sizeof down) {
        u += (size_t)snprintf(up + u, sizeof up - u, "%swait_p99 > %" PRIu64 "us", u ? ", " : "",
                              a->up_wait_us);
        d += (size_t)snprintf(down + d, sizeof down - d, "%swait_p99 <= %" PRIu64 "us",
                              d ? ", " : "", a->down_wait_us);
    }
    if ((a->when & SHOAL_AUTOSCALE_REFUSED) && u < sizeof up && d < sizeof down) {
        snprintf(up + u, sizeof up - u, "%srefused > %" PRIu64 "/s", u ? ", " : "", a->up_refused);
        snprintf(down + d, sizeof down - d, "%srefused <= %" PRIu64 "/s", d ? ", " : "",
                 a->down_refused);
    }
    snprintf(buf, size,
             "up when %s for %" PRIu64 "ms (+%" PRIu32 " at least); down when %s for %" PRIu64
             "ms (-%" PRIu32 "); cooldown %" PRIu64 "ms",
             up, a->up_for_ms, a->up_step, down, a->down_idle_ms, a->down_step, a->cooldown_ms);
}
