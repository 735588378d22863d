/* reload.c - a running host becomes a new config generation (SIGHUP,
 * shoalctl reload), all or nothing: what changed is worked out pool by pool
 * (same workers: sizes and limits live; same shape, new code or args: the
 * workers swapped; else a new pool under the name). Everything that can
 * fail -- the file, its plugins, every new pool's and every new worker's
 * init -- happens first, beside the running pools; only when all of it has
 * succeeded does anything running change. What it starts is held until
 * then (pool.h: opts held; swap.c): new pools' and sources' workers and a
 * kept pool's new workers run init and handle nothing else, a pull pool's
 * source is asked for no item, a checkout pool is in no group -- so a
 * reload that fails took nothing from a source, lent no member and sent
 * nothing. A swap whose COMMIT has not taken effect is tried again by the
 * next reload (swap_owed). Also the dry run (shoald --check --diff) and
 * forgetting pools that have ended. See host.h. A kept pool's live changes
 * are reload_live.c; its new workers, when its code or args changed,
 * reload_swap.c.
 */
#include "host/host.h"
#include "host/listen.h"
#include "host/source.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pool/pool.h"
#include "pool/swap.h"
#include "runtime/runtime.h"

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

static void leaf_name(const shoal_config_pool_t *cp, char *buf, size_t size)
{
    while (cp->nested != NULL)
        cp = cp->nested;
    snprintf(buf, size, "%s.%s", cp->plugin, cp->behaviour);
}

static shoal_host_pool_t *live_pool(shoal_host_t *h, const char *name)
{
    for (size_t i = 0; i < h->npools; i++)
        if (!h->pools[i].draining && strcmp(h->pools[i].name, name) == 0)
            return &h->pools[i];
    return NULL;
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
        leaf_name(b, x, sizeof x);
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

/* What a reload does to one pool of the new config: start a new one under
 * its name (none runs, its shape changed, a pull pool's kind, source,
 * source_args, redeliver or dead_letter changed: host_pull.c), or keep
 * the running one. why: the pull reason ("" for a new pool or shape). */
typedef struct verdict_s {
    bool fresh;
    bool swap, owed; /* a kept pool's workers are swapped for new code or args (a
                      * kept checkout pool has the same: checkout_replace);
                      * owed: its last swap may not have taken effect */
    char why[200];
} verdict_t;

/* The verdict for cp of c, before anything changes. A pull pool whose
 * dead_letter target gets a new pool gets one too: its spec holds the
 * target's PID (no cycles: config_pull.c; depth bounds it anyway). */
static void judge(shoal_host_t *h, const shoal_config_t *c, const shoal_config_pool_t *cp,
                  verdict_t *v, size_t depth)
{
    v->why[0] = '\0';
    const shoal_host_pool_t *old = live_pool(h, cp->name);
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
    judge(h, c, t, &tv, depth + 1);
    if ((v->fresh = tv.fresh))
        snprintf(v->why, sizeof v->why, "its dead_letter %s gets a new pool", t->name);
}

/* Every pool's verdict, indexed as c->pools; NULL on ENOMEM. */
static verdict_t *judge_all(shoal_host_t *h, const shoal_config_t *c)
{
    verdict_t *v = calloc(c->npools ? c->npools : 1, sizeof *v);
    for (size_t i = 0; v != NULL && i < c->npools; i++) {
        judge(h, c, &c->pools[i], &v[i], 0);
        /* A swap's COMMIT may be carried out while this reload runs: its
         * plan, its lines and its swaps follow this one reading of it. */
        const shoal_host_pool_t *hp = live_pool(h, c->pools[i].name);
        if (!v[i].fresh && hp != NULL) {
            v[i].owed = swap_owed(hp);
            v[i].swap = c->pools[i].kind != SHOAL_POOL_KIND_CHECKOUT &&
                        (v[i].owed || !same_workers(hp->cp, &c->pools[i], hp->rec->cap));
        }
    }
    return v;
}

/* What a reload changes, for its log line. */
/* The changes, as one line's text: whole notes while they fit, then how
 * many more there were -- a reload's line (2048 bytes in all: host_log.c)
 * keeps room for its ledger after them, a diff's answer for all of it
 * (control_cmd.c); a reload that removed 400 pools had its line cut in
 * the middle of a name, and its ledger with it. */
#define CHANGES_MAX 1500
typedef struct change_log_s {
    char text[CHANGES_MAX + 64]; /* + "; and N more changes (not listed)" */
    size_t len;
    unsigned n, more;
} change_log_t;

static void note(change_log_t *l, const char *fmt, ...) SHOAL_PRINTF(2, 3);
static void note(change_log_t *l, const char *fmt, ...)
{
    char one[CHANGES_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(one, sizeof one, fmt, ap);
    va_end(ap);
    size_t sep = l->n != 0 ? 2 : 0;
    if (n < 0 || l->more != 0 || l->len + sep + (size_t)n > CHANGES_MAX) {
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
static const char *changes(change_log_t *l)
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
static void metrics_note(change_log_t *log, const shoal_config_t *was, const shoal_config_t *c,
                         bool done)
{
    const shoal_listen_t *a = was->metrics.listen, *b = c->metrics.listen;
    if (a == NULL && b == NULL)
        return;
    if (a != NULL && b != NULL && strcmp(a->text, b->text) == 0)
        return;
    note(log, "metrics.listen %s -> %s", a != NULL ? a->text : "none",
         b != NULL ? b->text : (done ? "none (no longer served)" : "none (stop serving)"));
}

/* What a reload changes of the host's own settings that take effect at
 * once: the drain's deadline (read when a stop comes) and the log's
 * format (from the commit on). */
static void host_note(change_log_t *log, const shoal_config_t *was, const shoal_config_t *c)
{
    if (c->shutdown.drain_ms != was->shutdown.drain_ms)
        note(log, "shutdown.drain %" PRIu64 "ms -> %" PRIu64 "ms", was->shutdown.drain_ms,
             c->shutdown.drain_ms);
    if (c->log.format != was->log.format)
        note(log, "log.format %s -> %s", was->log.format == SHOAL_LOG_FORMAT_JSON ? "json" : "text",
             c->log.format == SHOAL_LOG_FORMAT_JSON ? "json" : "text");
}

void shoal__host_plan(shoal_host_t *h, const shoal_config_t *c, char *buf, size_t size)
{
    change_log_t log = {.len = 0, .n = 0};
    verdict_t *verdicts = judge_all(h, c);
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
            note(&log, "remove %s (it drains)", hp->name);
            continue;
        }
        const verdict_t *v = &verdicts[cp - c->pools];
        if (v->fresh) {
            note(&log, "replace %s (%s%sa new pool under its name; the old one drains)", hp->name,
                 v->why, v->why[0] ? ": " : "");
            continue;
        }
        if (v->swap) {
            char leaf[160];
            leaf_name(cp, leaf, sizeof leaf);
            note(&log, "%s: replace its workers (%s%s)", hp->name, leaf,
                 v->owed ? "; its last swap has not taken effect" : "");
        }
        char live[1200];
        shoal__host_live(h, hp, cp, &(shoal_host_live_t){.by_ns = 0}, live, sizeof live);
        if (live[0] != '\0')
            note(&log, "%s", live);
    }
    free(verdicts);
    for (size_t i = 0; i < c->npools; i++)
        if (live_pool(h, c->pools[i].name) == NULL)
            note(&log, "start %s", c->pools[i].name);
    char notes[600];
    shoal__host_sources_plan(h, c, notes, sizeof notes);
    if (notes[0] != '\0')
        note(&log, "%s", notes);
    metrics_note(&log, h->config, c, false);
    host_note(&log, h->config, c);
    snprintf(buf, size, "%s", changes(&log));
}

/* ---- reload ------------------------------------------------------------- */

static void fail_log(shoal_host_t *h, const char *what, char *why, size_t why_size)
{
    h->reloads_failed++;
    shoal__host_log(h, SHOAL_LOG_ERROR,
                    "reload failed (%" PRIu64 " so far), generation %" PRIu64 " keeps running: %s",
                    h->reloads_failed, h->generation, what);
    if (why != NULL)
        snprintf(why, why_size, "%s", what);
}

/* What a reload starts before it commits, said before it starts it: the
 * lines its new pools and workers log meanwhile carry the names of the
 * running pools they would replace (a new pool's own end, "work: ended:
 * ...", read as the running pool's end when the reload then failed). */
static void trying_log(shoal_host_t *h, const shoal_config_t *c, const verdict_t *verdicts,
                       uint64_t gen, const char *path)
{
    change_log_t log = {.len = 0, .n = 0};
    for (size_t i = 0; i < c->npools; i++) {
        const shoal_config_pool_t *cp = &c->pools[c->order[i]];
        const shoal_host_pool_t *hp = live_pool(h, cp->name);
        if (verdicts[c->order[i]].fresh)
            note(&log, "%s (%s)", cp->name, hp != NULL ? "a new pool to replace it" : "a new pool");
        else if (hp != NULL && verdicts[c->order[i]].swap)
            note(&log, "%s (new workers)", cp->name);
    }
    if (log.n != 0)
        shoal__host_log(h, SHOAL_LOG_INFO,
                        "reload: trying generation %" PRIu64 " from %s: starting beside the "
                        "running pools: %s; the running ones serve on until it commits",
                        gen, path, changes(&log));
}

/* The reload failed after hooks[0..n) prepared: each of them aborts. */
static void hooks_abort(shoal_host_t *h, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (h->hooks[k].abort != NULL)
            h->hooks[k].abort(h->hooks[k].user);
}

/* What the reload does now (host.h: reload_step). */
static void step(shoal_host_t *h, const char *fmt, ...) SHOAL_PRINTF(2, 3);
static void step(shoal_host_t *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->reload_step, sizeof h->reload_step, fmt, ap);
    va_end(ap);
}

static int reload(shoal_host_t *h, const char *path, char *why, size_t why_size)
{
    shoal_diag_t err = {0};
    char buf[1200];
    shoal_config_t *c = NULL;
    step(h, "reading the file, loading its plugins");
    int rc = shoal__config_load(path, &c, &err);
    if (rc == SHOAL_OK)
        rc = shoal__config_resolve(c, h->loader, &err);
    if (rc != SHOAL_OK) {
        fail_log(h, shoal__diag_format(&err, buf, sizeof buf), why, why_size);
        shoal__config_free(c);
        return rc;
    }
    /* What lives outside the host first (metrics.listen): it may refuse;
     * the hooks prepared before it are aborted. */
    size_t prepared = 0;
    for (; prepared < h->nhooks; prepared++) {
        const shoal_host_hook_t *k = &h->hooks[prepared];
        if (k->prepare != NULL && (rc = k->prepare(k->user, c, &err)) != SHOAL_OK) {
            hooks_abort(h, prepared);
            fail_log(h, shoal__diag_format(&err, buf, sizeof buf), why, why_size);
            shoal__config_free(c);
            return rc;
        }
    }
    /* A stop that came while the file was read or its plugins loaded (a
     * plugin's init may take 10 s) fails the reload before anything
     * starts, as one during a start does. */
    if (h->interrupted != NULL && h->interrupted(h->interrupted_arg)) {
        hooks_abort(h, prepared);
        fail_log(h, "interrupted by a stop before its pools started", why, why_size);
        shoal__config_free(c);
        return SHOAL_ESHUTDOWN;
    }
    uint64_t gen = h->generation + 1;
    size_t first_new = h->npools, first_src = h->nsources;
    /* Pools whose workers were swapped, prepared: committed below, or
     * aborted on a failure. */
    size_t *swapped = calloc(h->npools ? h->npools : 1, sizeof *swapped), nswapped = 0;
    uint64_t *tokens = calloc(h->npools ? h->npools : 1, sizeof *tokens); /* swapped[k]'s */
    verdict_t *verdicts = judge_all(h, c); /* before anything starts */
    if (swapped == NULL || tokens == NULL || verdicts == NULL) {
        rc = SHOAL_ENOMEM;
        shoal__diag_set(&err, path, 0, 0, "out of memory");
        goto undo;
    }
    trying_log(h, c, verdicts, gen, path);
    /* 1. New pools, and new ones for those whose shape changed: started
     * beside the running ones, each waited for until its workers have run
     * init. */
    for (size_t i = 0; i < c->npools; i++) {
        /* dead_letter targets first: a pull pool's spec holds the PID */
        const shoal_config_pool_t *cp = &c->pools[c->order[i]];
        if (!verdicts[c->order[i]].fresh)
            continue; /* kept: resized, or its workers swapped, below */
        shoal_pid_t pid;
        char what[300];
        step(h, "starting pool %s (its first workers run init)", cp->name);
        shoal_pool_opts_t po = {.held = true, /* until the commit: SHOAL__POOL_GO */
                                .interrupted = h->interrupted,
                                .interrupted_arg = h->interrupted_arg};
        if ((rc = shoal__host_start_pool(h, c, cp, gen, &po, &pid, what, sizeof what)) !=
            SHOAL_OK) {
            shoal__diag_set(&err, cp->at->file, cp->at->line, cp->at->col,
                            "pools.%s: cannot start: %s", cp->name, what);
            goto undo;
        }
        if (shoal__host_pool_add(h, cp, pid, gen) == NULL) {
            shoal_runtime_stop_actor(h->rt, pid);
            rc = SHOAL_ENOMEM;
            shoal__diag_set(&err, cp->at->file, cp->at->line, cp->at->col,
                            "pools.%s: out of memory", cp->name);
            goto undo;
        }
    }
    /* 2. New code or args for a kept pool: its new workers start beside the
     * old ones and wait. */
    for (size_t i = 0; i < first_new; i++) {
        shoal_host_pool_t *hp = &h->pools[i];
        const shoal_config_pool_t *cp = hp->draining ? NULL : shoal__config_pool(c, hp->name);
        if (cp == NULL || !verdicts[cp - c->pools].swap)
            continue;
        char what[300];
        step(h, "starting pool %s's new workers (they run init)", cp->name);
        if ((rc = shoal__host_swap_prepare(h, c, gen, hp, cp, &tokens[nswapped], what,
                                           sizeof what)) != SHOAL_OK) {
            shoal__diag_set(&err, cp->at->file, cp->at->line, cp->at->col,
                            "pools.%s: a new worker did not start: %s", cp->name, what);
            goto undo;
        }
        swapped[nswapped++] = i;
    }
    /* 3. New sources, and new ones for changed sources: their init runs. */
    step(h, "starting the new sources (they run init)");
    if ((rc = shoal__host_sources_prepare(h, c, gen, &first_src, &err)) != SHOAL_OK)
        goto undo;

    /* Committed: nothing below can make the reload fail. New and replacing
     * pools take their names first, before any wait: a sender that looks a
     * replaced pool up by name finds the one that serves from now on, never
     * the old one, told to drain below (it refuses). Then the swaps'
     * COMMITs and the live changes' calls, which share one deadline
     * (shoal_host_live_t): with every dispatcher thread stuck, each would
     * wait its own. */
    step(h, "committing: the new pools go to work, the old ones drain");
    for (size_t j = first_new; j < h->npools; j++)
        shoal_runtime_register(h->rt, h->pools[j].name, h->pools[j].pid);
    change_log_t log = {.len = 0, .n = 0};
    shoal_host_live_t lv = {.by_ns = shoal__deadline_ns(shoal__now_ns(), SHOAL_HOST_LIVE_MS)};
    /* They were started held: they work from now on -- before the pools
     * they replace are told to drain, so that a group's takers always find
     * an open pool of it. */
    for (size_t j = first_new; j < h->npools; j++)
        shoal__host_go(h, &h->pools[j], &lv);
    for (size_t k = 0; k < nswapped; k++) {
        shoal_host_pool_t *hp = &h->pools[swapped[k]];
        const shoal_config_pool_t *cp = shoal__config_pool(c, hp->name);
        uint32_t n = 0;
        int r = shoal__host_live_rc(&lv,
                                    shoal__pool_swap_step(h->rt, hp->pid, SHOAL__POOL_SWAP_COMMIT,
                                                          tokens[k], shoal__host_live_ms(&lv), &n));
        char leaf[160];
        leaf_name(cp, leaf, sizeof leaf);
        /* Until the pool says otherwise, it may run its old code: the next
         * reload swaps it again (swap_owed). */
        hp->swap_token = r == SHOAL_OK ? 0 : tokens[k];
        if (r == SHOAL_ETIMEDOUT) { /* still queued: the pool's actor carries it out */
            note(&log, "%s: workers replaced when its actor runs (%s)", hp->name, leaf);
            shoal__host_log(h, SHOAL_LOG_WARN,
                            "reload: pool %s: the swap of its workers was not answered within %d "
                            "ms (its actor did not run: every dispatcher thread busy?); it is "
                            "still queued and takes effect when the actor runs",
                            hp->name, SHOAL_HOST_LIVE_MS);
        } else if (r != SHOAL_OK) { /* its new workers are stopped; the old ones serve on */
            shoal__pool_swap_step(h->rt, hp->pid, SHOAL__POOL_SWAP_ABORT, tokens[k],
                                  shoal__host_live_ms(&lv), NULL);
            note(&log,
                 "%s: swap failed at its commit (%s): the old workers serve on; the next reload "
                 "tries it again",
                 hp->name, shoal_strerror(r));
        } else
            note(&log, "%s: %u workers replaced (%s)", hp->name, n, leaf);
    }
    for (size_t i = 0; i < first_new; i++) {
        shoal_host_pool_t *hp = &h->pools[i];
        if (hp->draining)
            continue;
        const shoal_config_pool_t *cp = shoal__config_pool(c, hp->name);
        bool replaced = false;
        for (size_t j = first_new; j < h->npools; j++)
            replaced |= strcmp(h->pools[j].name, hp->name) == 0;
        if (cp == NULL || replaced) {
            const char *reason = cp != NULL ? verdicts[cp - c->pools].why : "";
            if (cp == NULL)
                shoal_runtime_unregister(h->rt, hp->name);
            note(&log, "%s %s%s%s%s", cp == NULL ? "removed" : "replaced", hp->name,
                 reason[0] ? " (" : "", reason, reason[0] ? ")" : "");
            hp->ended_gen = gen;
            shoal__host_drain_one(h, hp);
            continue;
        }
        char live[1200]; /* what runs now (a scale may have changed the size since) */
        unsigned unanswered = lv.unanswered;
        shoal__host_live(h, hp, cp, &lv, live, sizeof live);
        if (live[0] != '\0')
            note(&log, "%s", live);
        if (lv.unanswered != unanswered)
            shoal__host_log(h, SHOAL_LOG_WARN,
                            "reload: pool %s: a live change was not answered within %d ms (its "
                            "actor did not run: every dispatcher thread busy?); it is still queued "
                            "and takes effect when the actor runs: %s",
                            hp->name, SHOAL_HOST_LIVE_MS, live);
        hp->cp = cp; /* the new generation's entry from now on */
    }
    for (size_t j = first_new; j < h->npools; j++) {
        shoal_host_pool_t *hp = &h->pools[j];
        /* Replaced by this reload (said above); one of the name that an
         * earlier reload removed, still draining or ended, is no matter. */
        bool replaced = false;
        for (size_t i = 0; i < first_new; i++)
            replaced |= h->pools[i].ended_gen == gen && strcmp(h->pools[i].name, hp->name) == 0;
        if (!replaced)
            note(&log, "started %s", hp->name);
    }
    char notes[600];
    shoal__host_sources_commit(h, c, first_src, notes, sizeof notes);
    if (notes[0] != '\0')
        note(&log, "%s", notes);
    /* The runtime's settings and the control socket are fixed at start. */
    const shoal_config_t *was = h->config;
    metrics_note(&log, was, c, true);
    host_note(&log, was, c);
    if (c->runtime.threads != was->runtime.threads ||
        c->runtime.throughput != was->runtime.throughput ||
        c->runtime.spin_us != was->runtime.spin_us ||
        c->runtime.max_actors != was->runtime.max_actors ||
        c->runtime.max_queued != was->runtime.max_queued ||
        c->runtime.stall_warn_ms != was->runtime.stall_warn_ms ||
        c->runtime.max_extra_threads != was->runtime.max_extra_threads ||
        c->log.level != was->log.level ||
        (!h->control_fixed &&
         ((c->runtime.control == NULL) != (was->runtime.control == NULL) ||
          (c->runtime.control != NULL && strcmp(c->runtime.control, was->runtime.control) != 0))))
        note(&log, "runtime: and log.level: changes take effect at the next start");
    /* Nothing refers to the old config any more: the pools' code and args
     * are held by the pools themselves (code.h). It is freed once the new
     * one is the host's: freeing it may release a plugin whose fini takes
     * up to 10 s, during which the control socket is served (loader.h:
     * tend) -- as generation gen, its pools reached by their names. */
    shoal_config_t *old = h->config;
    h->config = c;
    h->generation = gen;
    h->reloads++;
    shoal__host_set_generation(h, gen, c->log.format);
    step(h, "committed: releasing the plugins no longer used");
    shoal__config_free(old);
    for (size_t k = 0; k < h->nhooks; k++)
        if (h->hooks[k].commit != NULL)
            h->hooks[k].commit(h->hooks[k].user);
    free(swapped);
    free(tokens);
    free(verdicts);
    char ledger[320];
    shoal__host_ledger(h, ledger, sizeof ledger);
    shoal__host_log(h, SHOAL_LOG_INFO, "reload: generation %" PRIu64 " from %s: %s; %s", gen, path,
                    changes(&log), ledger);
    return SHOAL_OK;
undo:
    step(h, "undoing what it started");
    hooks_abort(h, prepared);
    for (size_t k = 0; k < nswapped; k++)
        shoal__pool_swap_step(h->rt, h->pools[swapped[k]].pid, SHOAL__POOL_SWAP_ABORT, tokens[k],
                              SHOAL_HOST_START_TIMEOUT_MS + 5000, NULL);
    free(swapped);
    free(tokens);
    free(verdicts);
    shoal__host_sources_undo(h, first_src);
    /* The pools started for this reload: stopped and forgotten (their
     * counts, if any, stay in the ledger of the generation that failed). */
    while (h->npools > first_new) {
        shoal_runtime_stop_actor(h->rt, h->pools[h->npools - 1].pid);
        shoal__host_pool_forget(h, h->npools - 1);
    }
    fail_log(h, shoal__diag_format(&err, buf, sizeof buf), why, why_size);
    shoal__config_free(c);
    return rc;
}

int shoal__host_reload(shoal_host_t *h, const char *path, char *why, size_t why_size)
{
    char text[1200] = "";
    for (size_t k = 0; k < h->nhooks; k++)
        if (h->hooks[k].begin != NULL)
            h->hooks[k].begin(h, h->hooks[k].user);
    int rc = reload(h, path, text, sizeof text);
    h->reload_step[0] = '\0';
    for (size_t k = 0; k < h->nhooks; k++)
        if (h->hooks[k].end != NULL)
            h->hooks[k].end(h, h->hooks[k].user, rc, text);
    if (why != NULL)
        snprintf(why, why_size, "%s", text);
    return rc;
}

int shoal__host_hook(shoal_host_t *h, const shoal_host_hook_t *hook)
{
    if (h->nhooks == SHOAL_HOST_HOOKS_MAX)
        return SHOAL_ELIMIT;
    h->hooks[h->nhooks++] = *hook;
    return SHOAL_OK;
}

void shoal__host_unhook(shoal_host_t *h, const void *user)
{
    for (size_t k = 0; k < h->nhooks; k++) {
        if (h->hooks[k].user == user) {
            memmove(&h->hooks[k], &h->hooks[k + 1], (h->nhooks - k - 1) * sizeof h->hooks[0]);
            h->nhooks--;
            return;
        }
    }
}

void shoal__host_tidy(shoal_host_t *h)
{
    shoal__host_pull_release(h); /* dead-letter targets whose senders have ended */
    shoal__host_go_owed(h);      /* a reload's new pools and sources not told yet */
    for (size_t i = 0; i < h->npools;) {
        shoal_host_pool_t *hp = &h->pools[i];
        /* Quiet: its actor and every worker have ended; its counts are
         * final and move into the ledger. */
        if (hp->draining && shoal__pool_is_quiet(hp->rec))
            shoal__host_pool_forget(h, i);
        else
            i++;
    }
}
