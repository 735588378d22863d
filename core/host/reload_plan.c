/* reload_plan.c - what a reload to a config would change, worked out
 * before anything changes: each pool's verdict (kept, its sizes and
 * limits changed live; kept, its workers swapped for new code or args; or
 * a new pool under its name, the old one drained), and the words the
 * reload's log line and `shoalctl diff` (shoal__host_plan) say it in. The
 * reload itself is reload.c.
 */
#include "host/reload_plan.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/listen.h"
#include "host/source.h"
#include "pool/pool.h"

/* ---- what changed ---------------------------------------------------------- */

/* Whether b differs from a only in its leaf workers' code or args (and the
 * top's size, mailbox, strategy and elastic settings; and its bounds, if
 * b's max is within cap, the most workers the running pool can have, 0
 * for none: elastic.c, SET_BOUNDS): then the pool keeps its PID, and its
 * workers are swapped if the code or args differ. */
static bool same_shape(const shoal_config_pool_t *a, const shoal_config_pool_t *b, bool top,
                       uint32_t cap)
{
    if ((a->nested == NULL) != (b->nested == NULL) || a->isolation != b->isolation)
        return false;
    if (!top && (a->size != b->size || a->mailbox != b->mailbox || a->strategy != b->strategy))
        return false;
    if (a->isolation != SHOAL_ISOLATION_NONE && a->strategy != b->strategy)
        return false; /* its child process's pool picks the workers: a new child */
    bool live_bounds = top && a->isolation == SHOAL_ISOLATION_NONE && b->max_size <= cap;
    if ((!live_bounds && (a->min_size != b->min_size || a->max_size != b->max_size)) ||
        a->restart.max != b->restart.max || a->restart.within_ms != b->restart.within_ms ||
        a->restart.backoff_ms != b->restart.backoff_ms)
        return false;
    return a->nested == NULL || same_shape(a->nested, b->nested, false, 0);
}

/* Whether a running pool can become b without new workers: the same shape,
 * and at its leaf the same code (plugin module, behaviour) and args. */
static bool same_workers(const shoal_config_pool_t *a, const shoal_config_pool_t *b, uint32_t cap)
{
    if (!same_shape(a, b, true, cap))
        return false;
    while (a->nested != NULL)
        a = a->nested, b = b->nested;
    return a->module == b->module && strcmp(a->behaviour, b->behaviour) == 0 &&
           shoal__node_equal(a->args, b->args);
}

bool shoal__host_same_actor(const shoal_config_pool_t *a, const shoal_config_pool_t *b)
{
    return same_workers(a, b, 0);
}

void shoal__reload_leaf_name(const shoal_config_pool_t *cp, char *buf, size_t size)
{
    while (cp->nested != NULL)
        cp = cp->nested;
    snprintf(buf, size, "%s.%s", cp->plugin, cp->behaviour);
}

shoal_host_pool_t *shoal__reload_live_pool(shoal_host_t *h, const char *name)
{
    for (size_t i = 0; i < h->npools; i++)
        if (!h->pools[i].draining && strcmp(h->pools[i].name, name) == 0)
            return &h->pools[i];
    return NULL;
}

/* The host's live pools by name, for the lookups of one plan (h->pools
 * does not change meanwhile): a scan for each pool of the file made a
 * diff of 15,000 unchanged pools take 7 s. */
static const char *live_name_at(const void *arr, size_t i)
{
    const shoal_host_pool_t *hp = &((const shoal_host_pool_t *)arr)[i];
    return hp->draining ? NULL : hp->name;
}

static shoal_host_pool_t *live_find(shoal_host_t *h, const shoal_name_index_t *live,
                                    const char *name)
{
    if (!shoal__name_index_ready(live)) /* no memory for it: a scan */
        return shoal__reload_live_pool(h, name);
    size_t i = shoal__name_index_find(live, h->pools, live_name_at, name);
    return i != SIZE_MAX ? &h->pools[i] : NULL;
}

/* A checkout pool is never swapped member by member: a new member, args,
 * group or restart policy is a new pool under the name, and the old one
 * drains -- each of its members in use ends when it is returned
 * (shoal/checkout.h). Its init, max and settings change live
 * (reload_live.c). */
static bool checkout_replace(const shoal_config_pool_t *a, const shoal_config_pool_t *b, char *why,
                             size_t size)
{
    if (a->module != b->module || strcmp(a->behaviour, b->behaviour) != 0 ||
        strcmp(a->plugin, b->plugin) != 0 || !shoal__node_equal(a->args, b->args)) {
        char x[160];
        shoal__reload_leaf_name(b, x, sizeof x);
        snprintf(why, size, "its members' code or args changed (%s)", x);
        return true;
    }
    if (memcmp(&a->restart, &b->restart, sizeof a->restart) != 0) {
        snprintf(why, size, "restart changed");
        return true;
    }
    const char *ga = a->checkout.group, *gb = b->checkout.group;
    if ((ga == NULL) != (gb == NULL) || (ga != NULL && strcmp(ga, gb) != 0)) {
        snprintf(why, size, "group %s -> %s", ga ? ga : "none", gb ? gb : "none");
        return true;
    }
    return false;
}

/* Whether hp's last worker swap may not have taken effect: its COMMIT
 * failed, or was not answered and the pool has not carried it out since
 * (pool.h: swap_done). Then hp->cp names code the pool may not run. */
static bool swap_owed(const shoal_host_pool_t *hp)
{
    return hp->swap_token != 0 &&
           atomic_load_explicit(&hp->rec->swap_done, memory_order_relaxed) != hp->swap_token;
}

static const char *kind_name(uint32_t kind)
{
    return kind == SHOAL_POOL_KIND_CHECKOUT ? "checkout"
           : kind == SHOAL_POOL_KIND_PULL   ? "pull"
                                            : "forward";
}

/* The verdict for cp of c, before anything changes. A pull pool whose
 * dead_letter target gets a new pool gets one too: its spec holds the
 * target's PID (no cycles: config_pull.c; depth bounds it anyway). */
static void judge(shoal_host_t *h, const shoal_name_index_t *live, const shoal_config_t *c,
                  const shoal_config_pool_t *cp, verdict_t *v, size_t depth)
{
    v->why[0] = '\0';
    const shoal_host_pool_t *old = live_find(h, live, cp->name);
    if (old != NULL && old->cp->kind != cp->kind) { /* a pool of another kind: said so */
        v->fresh = true;
        snprintf(v->why, sizeof v->why, "kind %s -> %s", kind_name(old->cp->kind),
                 kind_name(cp->kind));
        return;
    }
    if (old != NULL && cp->kind == SHOAL_POOL_KIND_CHECKOUT)
        v->fresh = checkout_replace(old->cp, cp, v->why, sizeof v->why); /* bounds: live */
    else
        v->fresh = old == NULL || !same_shape(old->cp, cp, true, old->rec->cap) ||
                   shoal__host_pull_replace(old->cp, cp, v->why, sizeof v->why);
    const shoal_config_pool_t *t = cp->dead_letter ? shoal__config_pool(c, cp->dead_letter) : NULL;
    if (v->fresh || t == NULL || depth >= c->npools)
        return;
    verdict_t tv;
    judge(h, live, c, t, &tv, depth + 1);
    if ((v->fresh = tv.fresh))
        snprintf(v->why, sizeof v->why, "its dead_letter %s gets a new pool", t->name);
}

/* Every pool's verdict, indexed as c->pools; NULL on ENOMEM. */
verdict_t *shoal__reload_judge_all(shoal_host_t *h, const shoal_config_t *c)
{
    verdict_t *v = calloc(c->npools ? c->npools : 1, sizeof *v);
    shoal_name_index_t live;
    shoal__name_index_build(&live, h->pools, h->npools, live_name_at);
    for (size_t i = 0; v != NULL && i < c->npools; i++) {
        judge(h, &live, c, &c->pools[i], &v[i], 0);
        /* A swap's COMMIT may be carried out while this reload runs: its
         * plan, its lines and its swaps follow this one reading of it. */
        const shoal_host_pool_t *hp = live_find(h, &live, c->pools[i].name);
        v[i].running = hp != NULL;
        if (!v[i].fresh && hp != NULL) {
            v[i].owed = swap_owed(hp);
            v[i].swap = c->pools[i].kind != SHOAL_POOL_KIND_CHECKOUT &&
                        (v[i].owed || !same_workers(hp->cp, &c->pools[i], hp->rec->cap));
        }
    }
    shoal__name_index_free(&live);
    return v;
}

void shoal__reload_note(change_log_t *l, const char *fmt, ...)
{
    char one[SHOAL_RELOAD_CHANGES_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(one, sizeof one, fmt, ap);
    va_end(ap);
    size_t sep = l->n != 0 ? 2 : 0;
    if (n < 0 || l->more != 0 || l->len + sep + (size_t)n > SHOAL_RELOAD_CHANGES_MAX) {
        l->more++;
        return;
    }
    memcpy(l->text + l->len, "; ", sep);
    memcpy(l->text + l->len + sep, one, (size_t)n + 1);
    l->len += sep + (size_t)n;
    l->n++;
}

/* The text of the changes noted: "no change", or the notes and how many
 * did not fit. */
const char *shoal__reload_changes(change_log_t *l)
{
    if (l->n == 0 && l->more == 0)
        return "no change";
    if (l->more != 0)
        snprintf(l->text + l->len, sizeof l->text - l->len, "%sand %u more change%s (not listed)",
                 l->n != 0 ? "; " : "", l->more, l->more == 1 ? "" : "s");
    return l->text;
}

/* What a reload does to metrics.listen (applied by shoald's reload hook,
 * shoal__host_hook, metrics.h): a note, or nothing when it stays. */
void shoal__reload_metrics_note(change_log_t *log, const shoal_config_t *was,
                                const shoal_config_t *c, bool done)
{
    const shoal_listen_t *a = was->metrics.listen, *b = c->metrics.listen;
    if (a == NULL && b == NULL)
        return;
    if (a != NULL && b != NULL && strcmp(a->text, b->text) == 0)
        return;
    shoal__reload_note(log, "metrics.listen %s -> %s", a != NULL ? a->text : "none",
                       b != NULL ? b->text
                                 : (done ? "none (no longer served)" : "none (stop serving)"));
}

/* What a reload changes of the host's own settings that take effect at
 * once: the drain's deadline (read when a stop comes) and the log's
 * format (from the commit on). */
void shoal__reload_host_note(change_log_t *log, const shoal_config_t *was, const shoal_config_t *c)
{
    if (c->shutdown.drain_ms != was->shutdown.drain_ms)
        shoal__reload_note(log, "shutdown.drain %" PRIu64 "ms -> %" PRIu64 "ms",
                           was->shutdown.drain_ms, c->shutdown.drain_ms);
    if (c->log.format != was->log.format)
        shoal__reload_note(log, "log.format %s -> %s",
                           was->log.format == SHOAL_LOG_FORMAT_JSON ? "json" : "text",
                           c->log.format == SHOAL_LOG_FORMAT_JSON ? "json" : "text");
}

void shoal__host_plan(shoal_host_t *h, const shoal_config_t *c, char *buf, size_t size)
{
    change_log_t log = {.len = 0, .n = 0};
    verdict_t *verdicts = shoal__reload_judge_all(h, c);
    if (verdicts == NULL) {
        snprintf(buf, size, "out of memory");
        return;
    }
    for (size_t i = 0; i < h->npools; i++) {
        shoal_host_pool_t *hp = &h->pools[i];
        if (hp->draining)
            continue;
        const shoal_config_pool_t *cp = shoal__config_pool(c, hp->name);
        if (cp == NULL) {
            shoal__reload_note(&log, "remove %s (it drains)", hp->name);
            continue;
        }
        const verdict_t *v = &verdicts[cp - c->pools];
        if (v->fresh) {
            shoal__reload_note(
                &log, "replace %s (%s%sa new pool under its name%s; the old one drains)", hp->name,
                v->why, v->why[0] ? ": " : "", shoal__host_pull_epic_plan(hp, cp));
            continue;
        }
        if (v->swap) {
            char leaf[160];
            shoal__reload_leaf_name(cp, leaf, sizeof leaf);
            shoal__reload_note(&log, "%s: replace its workers (%s%s)", hp->name, leaf,
                               v->owed ? "; its last swap has not taken effect" : "");
        }
        char live[1200];
        shoal__host_live(h, hp, cp, &(shoal_host_live_t){.by_ns = 0}, live, sizeof live);
        if (live[0] != '\0')
            shoal__reload_note(&log, "%s", live);
    }
    free(verdicts);
    shoal_name_index_t live;
    shoal__name_index_build(&live, h->pools, h->npools, live_name_at);
    for (size_t i = 0; i < c->npools; i++)
        if (live_find(h, &live, c->pools[i].name) == NULL)
            shoal__reload_note(&log, "start %s", c->pools[i].name);
    shoal__name_index_free(&live);
    char notes[600];
    shoal__host_sources_plan(h, c, notes, sizeof notes);
    if (notes[0] != '\0')
        shoal__reload_note(&log, "%s", notes);
    shoal__reload_metrics_note(&log, h->config, c, false);
    shoal__reload_host_note(&log, h->config, c);
    snprintf(buf, size, "%s", shoal__reload_changes(&log));
}
