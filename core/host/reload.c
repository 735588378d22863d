/* reload.c - a running host becomes a new config generation (SIGHUP,
 * shoalctl reload): what changed is worked out pool by pool (same workers:
 * sizes and limits live; same shape: workers swapped one by one; else a new
 * pool under the name), started first, then applied; all or nothing. Also
 * the dry run (shoald --check --diff) and forgetting drained pools. See
 * host.h.
 */
#include "host/host.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pool/pool.h"
#include "runtime/runtime.h"

/* ---- reload ------------------------------------------------------------- */

static bool node_equal(const shoal_node_t *a, const shoal_node_t *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    if (a->kind != b->kind || a->n != b->n)
        return false;
    if (a->kind == SHOAL_NODE_SCALAR)
        return a->quoted == b->quoted && strcmp(a->text, b->text) == 0;
    for (size_t i = 0; i < a->n; i++) {
        if (a->kind == SHOAL_NODE_MAP && strcmp(a->keys[i]->text, b->keys[i]->text) != 0)
            return false;
        if (!node_equal(a->items[i], b->items[i]))
            return false;
    }
    return true;
}

/* Whether b differs from a only in its leaf workers' code or args (and the
 * top's size and mailbox): then the pool keeps its PID, and its workers are
 * swapped one by one if the code or args differ. */
static bool same_shape(const shoal_config_pool_t *a, const shoal_config_pool_t *b, bool top)
{
    if ((a->nested == NULL) != (b->nested == NULL))
        return false;
    if (!top && (a->size != b->size || a->mailbox != b->mailbox))
        return false;
    if (a->min_size != b->min_size || a->max_size != b->max_size ||
        a->restart.max != b->restart.max || a->restart.within_ms != b->restart.within_ms ||
        a->restart.backoff_ms != b->restart.backoff_ms)
        return false;
    return a->nested == NULL || same_shape(a->nested, b->nested, false);
}

/* Whether a running pool can become b without new workers: the same shape,
 * and at its leaf the same code (plugin module, behaviour) and args. */
static bool same_workers(const shoal_config_t *ca, const shoal_config_pool_t *a,
                         const shoal_config_t *cb, const shoal_config_pool_t *b)
{
    if (!same_shape(a, b, true))
        return false;
    while (a->nested != NULL)
        a = a->nested, b = b->nested;
    const shoal_config_plugin_t *pa = shoal__config_plugin(ca, a->plugin),
                                *pb = shoal__config_plugin(cb, b->plugin);
    return pa != NULL && pb != NULL && pa->module == pb->module &&
           strcmp(a->behaviour, b->behaviour) == 0 && node_equal(a->args, b->args);
}

/* What the pool runs with now (a scale may have changed its size since its
 * config), as the pool itself says; its config's if it cannot. */
static void running(shoal_host_t *h, const shoal_host_pool_t *hp, uint32_t *size, uint32_t *mailbox)
{
    shoal_pool_stats_t st;
    bool ok = shoal_pool_stats(h->rt, hp->pid, &st, 1000) == SHOAL_OK;
    *size = ok ? st.target_size : hp->cp->size;
    *mailbox = ok ? st.mailbox : hp->cp->mailbox;
}

static const char *leaf_name(const shoal_config_pool_t *cp)
{
    static _Thread_local char buf[160];
    while (cp->nested != NULL)
        cp = cp->nested;
    snprintf(buf, sizeof buf, "%s.%s", cp->plugin, cp->behaviour);
    return buf;
}

/* Sends the pool its new spec chain (SHOAL__POOL_SWAP, pool/workers.c).
 * The pool then belongs to generation g; the generation its retiring
 * workers came from is kept until they have all ended (tidy). */
static int swap_workers(shoal_host_t *h, shoal_host_pool_t *hp, const shoal_config_pool_t *cp,
                        shoal_host_gen_t *g)
{
    shoal_pool_swap_t *sw = calloc(1, sizeof *sw);
    if (sw == NULL)
        return SHOAL_ENOMEM;
    const shoal_config_pool_t *leaf = NULL;
    shoal__host_spec_chain(cp, sw->chain, &leaf);
    sw->hold = shoal__host_hold(leaf->module);
    shoal_answer_t a;
    int rc =
        shoal_runtime_call_priority(h->rt, hp->pid, SHOAL__POOL_SWAP, &sw, sizeof sw, 10000, &a);
    if (rc != SHOAL_OK) {
        free(sw); /* never delivered: still ours */
        return rc;
    }
    uint32_t n = 0;
    if (a.status != SHOAL_OK)
        rc = a.status;
    else if (a.size == sizeof n)
        memcpy(&n, a.data, sizeof n);
    shoal_answer_release(&a);
    if (rc != SHOAL_OK)
        return rc;
    if (hp->prev != NULL) /* a swap before the last one's workers ended */
        shoal__host_gen_unref(h, hp->prev);
    hp->prev = hp->from;
    hp->from = g;
    g->refs++;
    hp->cp = cp;
    return (int)n;
}

static shoal_host_pool_t *live_pool(shoal_host_t *h, const char *name)
{
    for (size_t i = 0; i < h->npools; i++)
        if (!h->pools[i].draining && strcmp(h->pools[i].name, name) == 0)
            return &h->pools[i];
    return NULL;
}

static void drain_async(shoal_host_t *h, shoal_host_pool_t *hp)
{
    hp->draining = true;
    if (shoal_runtime_send_priority(h->rt, hp->pid, SHOAL_POOL_DRAIN, NULL, 0) == SHOAL_ENOPROC)
        hp->ended = true;
}

/* What a reload changes, for its log line. */
typedef struct change_log_s {
    char text[900];
    size_t len;
    unsigned n;
} change_log_t;

static void note(change_log_t *l, const char *fmt, ...) SHOAL_PRINTF(2, 3);
static void note(change_log_t *l, const char *fmt, ...)
{
    if (l->len >= sizeof l->text - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(l->text + l->len, sizeof l->text - l->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        l->len += (size_t)n < sizeof l->text - l->len ? (size_t)n : sizeof l->text - l->len - 1;
    l->n++;
}

void shoal__host_plan(shoal_host_t *h, const shoal_config_t *c, char *buf, size_t size)
{
    change_log_t log = {.len = 0, .n = 0};
    for (size_t i = 0; i < h->npools; i++) {
        shoal_host_pool_t *hp = &h->pools[i];
        if (hp->draining)
            continue;
        const shoal_config_pool_t *cp = shoal__config_pool(c, hp->name);
        if (cp == NULL) {
            note(&log, "%sremove %s (it drains)", log.n ? "; " : "", hp->name);
            continue;
        }
        if (!same_workers(hp->from->config, hp->cp, c, cp)) {
            if (!same_shape(hp->cp, cp, true)) {
                note(&log, "%sreplace %s (a new pool under its name; the old one drains)",
                     log.n ? "; " : "", hp->name);
                continue;
            }
            note(&log, "%s%s: replace its workers one by one (%s)", log.n ? "; " : "", hp->name,
                 leaf_name(cp));
        }
        uint32_t run_size, run_mailbox;
        running(h, hp, &run_size, &run_mailbox);
        if (cp->size != run_size)
            note(&log, "%s%s size %u -> %u", log.n ? "; " : "", hp->name, run_size, cp->size);
        if (cp->mailbox != run_mailbox) {
            char a[24], b[24];
            shoal__host_mailbox_text(run_mailbox, a);
            shoal__host_mailbox_text(cp->mailbox, b);
            note(&log, "%s%s mailbox %s -> %s", log.n ? "; " : "", hp->name, a, b);
        }
    }
    for (size_t i = 0; i < c->npools; i++)
        if (live_pool(h, c->pools[i].name) == NULL)
            note(&log, "%sstart %s", log.n ? "; " : "", c->pools[i].name);
    snprintf(buf, size, "%s", log.n ? log.text : "no change");
}

int shoal__host_reload(shoal_host_t *h, const char *path, shoal_diag_t *why)
{
    shoal_diag_t err = {0};
    char buf[1200];
    shoal_config_t *c = NULL;
    int rc = shoal__config_load(path, &c, &err);
    if (rc == SHOAL_OK)
        rc = shoal__config_resolve(c, h->loader, &err);
    if (rc != SHOAL_OK) {
        h->reloads_failed++;
        shoal__host_log(
            h, SHOAL_LOG_ERROR,
            "reload failed (%" PRIu64 " so far), generation %" PRIu64 " keeps running: %s",
            h->reloads_failed, h->generation, shoal__diag_format(&err, buf, sizeof buf));
        shoal__config_free(c);
        if (why != NULL)
            *why = err;
        return rc;
    }
    /* Start what is new or changed first: a failure stops those and leaves
     * everything else as it was. */
    size_t first_new = h->npools;
    shoal_host_gen_t *g = NULL;
    h->generation++;
    if ((g = shoal__host_gen_new(h, c)) == NULL) {
        rc = SHOAL_ENOMEM;
        shoal__config_free(c);
        goto undo;
    }
    for (size_t i = 0; i < c->npools; i++) {
        const shoal_config_pool_t *cp = &c->pools[i];
        shoal_host_pool_t *old = live_pool(h, cp->name);
        if (old != NULL && same_shape(old->cp, cp, true))
            continue; /* kept: resized, or its workers swapped, below */
        shoal_pid_t pid;
        if ((rc = shoal__host_start_pool(h, cp, &pid)) != SHOAL_OK) {
            shoal__diag_set(&err, cp->at->file, cp->at->line, cp->at->col,
                            "pools.%s: cannot start: %s", cp->name, shoal_strerror(rc));
            goto undo;
        }
        if (shoal__host_pool_add(h, cp, g, pid) == NULL) {
            shoal_runtime_stop_actor(h->rt, pid);
            rc = SHOAL_ENOMEM;
            goto undo;
        }
    }
    /* Committed: change the running pools. */
    change_log_t log = {.len = 0, .n = 0};
    for (size_t i = 0; i < first_new; i++) {
        shoal_host_pool_t *hp = &h->pools[i];
        if (hp->draining)
            continue;
        const shoal_config_pool_t *cp = shoal__config_pool(c, hp->name);
        bool replaced = false;
        for (size_t j = first_new; j < h->npools; j++)
            replaced |= strcmp(h->pools[j].name, hp->name) == 0;
        if (cp == NULL || replaced) {
            if (cp == NULL)
                shoal_runtime_unregister(h->rt, hp->name);
            drain_async(h, hp);
            note(&log, "%s%s %s", log.n ? "; " : "", cp == NULL ? "removed" : "replaced", hp->name);
            continue;
        }
        /* What runs now (a scale may have changed the size since). */
        uint32_t run_size, run_mailbox;
        running(h, hp, &run_size, &run_mailbox);
        if (!same_workers(hp->from->config, hp->cp, c, cp)) {
            /* New code or args: the workers are replaced one by one. */
            int n = swap_workers(h, hp, cp, g);
            if (n < 0)
                note(&log, "%s%s: swap failed (%s)", log.n ? "; " : "", hp->name,
                     shoal_strerror(n));
            else
                note(&log, "%s%s: %d workers replaced (%s)", log.n ? "; " : "", hp->name, n,
                     leaf_name(cp));
        }
        /* The same workers: sizes and limits live; the pool now belongs
         * to the new generation's entry (its args stay in the old tree,
         * which it keeps alive). */
        if (cp->size != run_size) {
            int r = shoal_pool_set_size(h->rt, hp->pid, cp->size, 5000);
            note(&log, "%s%s size %u -> %u%s", log.n ? "; " : "", hp->name, run_size, cp->size,
                 r < 0 ? " (failed)" : "");
        }
        if (cp->mailbox != run_mailbox) {
            char a[24], b2[24];
            shoal__host_mailbox_text(run_mailbox, a);
            shoal__host_mailbox_text(cp->mailbox, b2);
            int r = shoal_pool_set_mailbox(h->rt, hp->pid, cp->mailbox, 5000);
            note(&log, "%s%s mailbox %s -> %s%s", log.n ? "; " : "", hp->name, a, b2,
                 r < 0 ? " (failed)" : "");
        }
    }
    for (size_t j = first_new; j < h->npools; j++) {
        shoal_host_pool_t *hp = &h->pools[j];
        shoal_runtime_register(h->rt, hp->name, hp->pid); /* a replaced one: to the new PID */
        bool replaced = false;
        for (size_t i = 0; i < first_new; i++)
            replaced |= h->pools[i].draining && strcmp(h->pools[i].name, hp->name) == 0;
        if (!replaced)
            note(&log, "%sstarted %s", log.n ? "; " : "", hp->name);
    }
    /* The runtime's settings and the control socket are fixed at start. */
    const shoal_config_t *was = h->config;
    if (c->runtime.threads != was->runtime.threads ||
        c->runtime.throughput != was->runtime.throughput ||
        c->runtime.spin_us != was->runtime.spin_us ||
        c->runtime.max_actors != was->runtime.max_actors || c->log.level != was->log.level ||
        (c->runtime.control == NULL) != (was->runtime.control == NULL) ||
        (c->runtime.control != NULL && strcmp(c->runtime.control, was->runtime.control) != 0))
        note(&log, "%sruntime: and log.level: changes take effect at the next start",
             log.n ? "; " : "");
    shoal_host_gen_t *prev = NULL;
    for (shoal_host_gen_t *x = h->gens; x != NULL; x = x->next)
        if (x != g && x->config == h->config)
            prev = x;
    h->config = c;
    h->log_format = c->log.format; /* the level of the runtime's own lines stays */
    h->reloads++;
    if (prev != NULL)
        shoal__host_gen_unref(h, prev); /* no longer the current one */
    char ledger[320];
    shoal__host_ledger(h, ledger, sizeof ledger);
    shoal__host_log(h, SHOAL_LOG_INFO, "reload: generation %" PRIu64 " from %s: %s; %s",
                    h->generation, path, log.n ? log.text : "no change", ledger);
    return SHOAL_OK;
undo:
    for (size_t j = first_new; j < h->npools; j++) {
        shoal_runtime_stop_actor(h->rt, h->pools[j].pid);
        h->pools[j].from->refs--;
        free(h->pools[j].name);
    }
    h->npools = first_new;
    h->generation--;
    h->reloads_failed++;
    if (g != NULL)
        shoal__host_gen_unref(h, g);
    shoal__host_log(h, SHOAL_LOG_ERROR,
                    "reload failed (%" PRIu64 " so far), generation %" PRIu64 " keeps running: %s",
                    h->reloads_failed, h->generation, shoal__diag_format(&err, buf, sizeof buf));
    if (why != NULL)
        *why = err;
    return rc;
}

void shoal__host_tidy(shoal_host_t *h)
{
    size_t k = 0;
    for (size_t i = 0; i < h->npools; i++) {
        shoal_host_pool_t *hp = &h->pools[i];
        if (hp->draining && !hp->ended) {
            shoal_pool_stats_t st;
            if (shoal_pool_stats(h->rt, hp->pid, &st, 1000) == SHOAL_ENOPROC)
                hp->ended = true;
        }
        if (hp->prev != NULL && !hp->draining) {
            /* Swapped: once its old workers have all ended (each ran its
             * init, with args from that generation, long before), the
             * generation may go. */
            shoal_pool_stats_t st;
            int rc = shoal_pool_stats(h->rt, hp->pid, &st, 1000);
            if (rc == SHOAL_ENOPROC || (rc == SHOAL_OK && st.retiring == 0)) {
                shoal__host_gen_unref(h, hp->prev);
                hp->prev = NULL;
            }
        }
        if (hp->draining && hp->ended) {
            free(hp->name);
            if (hp->prev != NULL)
                shoal__host_gen_unref(h, hp->prev);
            shoal__host_gen_unref(h, hp->from);
            continue;
        }
        h->pools[k++] = *hp;
    }
    h->npools = k;
}
