/* host.c - a runtime built from a config: pools started from their specs
 * (plugin behaviours held by their modules), names registered, logs in the
 * config's format, a drain with a deadline. See host.h.
 */
#include "host/host.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pool/pool.h"
#include "runtime/grow.h"
#include "runtime/runtime.h"

/* ---- logging ------------------------------------------------------------- */

static const char *const level_names[] = {"error", "warn", "info", "debug"};

static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(out, "\\u%04x", ch);
        else
            fputc(ch, out);
    }
    fputc('"', out);
}

/* line: as the runtime formats it, "level <slot.gen> name: text" or
 * "level: text". */
static void emit(shoal_host_t *h, int level, const char *line)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char when[48];
    size_t w = strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(when + w, sizeof when - w, ".%03dZ", (int)(ts.tv_nsec / 1000000));
    const char *lv = level_names[level < 0 ? 0 : level > 3 ? 3 : level];
    /* Skip the level word the runtime put first. */
    const char *rest = line;
    size_t n = strlen(lv);
    if (strncmp(rest, lv, n) == 0 && (rest[n] == ' ' || rest[n] == ':'))
        rest += n + (rest[n] == ':' ? 2 : 1);
    pthread_mutex_lock(&h->log_lock);
    if (h->log_format == SHOAL_LOG_FORMAT_JSON) {
        fprintf(h->log_out, "{\"ts\":\"%s\",\"gen\":%" PRIu64 ",\"level\":\"%s\"", when,
                h->generation, lv);
        const char *msg = rest;
        if (rest[0] == '<') { /* "<slot.gen> name: text" */
            const char *sp = strchr(rest, ' '), *colon = strstr(rest, ": ");
            if (sp != NULL && colon != NULL && colon > sp) {
                fprintf(h->log_out, ",\"pid\":\"%.*s\",\"actor\":", (int)(sp - rest - 2), rest + 1);
                char actor[160];
                snprintf(actor, sizeof actor, "%.*s", (int)(colon - sp - 1), sp + 1);
                json_string(h->log_out, actor);
                msg = colon + 2;
            }
        }
        fputs(",\"msg\":", h->log_out);
        json_string(h->log_out, msg);
        fputs("}\n", h->log_out);
    } else {
        fprintf(h->log_out, "%s gen=%" PRIu64 " %s %s\n", when, h->generation, lv, rest);
    }
    fflush(h->log_out);
    pthread_mutex_unlock(&h->log_lock);
}

static void runtime_log(void *user, int level, const char *line) { emit(user, level, line); }

void shoal__host_log(shoal_host_t *h, int level, const char *fmt, ...)
{
    if (level > h->config->log.level)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    emit(h, level, line);
}

/* ---- starting ------------------------------------------------------------ */

static void module_acquire(void *m) { shoal__module_ref(m); }
static void module_release(void *m) { shoal__module_release(m); }

/* The spec chain of a configured pool: specs[0] is the pool itself, each
 * nested level the next; the leaf runs the plugin behaviour. */
static void spec_chain(const shoal_config_pool_t *cp, shoal_pool_spec_t *specs,
                       const shoal_config_pool_t **leaf)
{
    size_t i = 0;
    for (const shoal_config_pool_t *p = cp; p != NULL; p = p->nested, i++) {
        shoal_pool_spec_t *s = &specs[i];
        shoal_pool_spec_init(s);
        s->name = p->name;
        s->size = p->size;
        s->min_size = p->min_size;
        s->max_size = p->max_size;
        s->mailbox = p->mailbox;
        s->restart = p->restart;
        if (p->nested != NULL) {
            s->worker_pool = &specs[i + 1];
        } else {
            s->worker = p->beh;
            s->worker_args = p->args; /* the node tree lives as long as the config */
            *leaf = p;
        }
    }
}

static int start_pool(shoal_host_t *h, const shoal_config_pool_t *cp, shoal_pid_t *pid)
{
    shoal_pool_spec_t specs[SHOAL_POOL_MAX_DEPTH];
    const shoal_config_pool_t *leaf = NULL;
    spec_chain(cp, specs, &leaf);
    shoal_pool_hold_t hold = {module_acquire, module_release, leaf->module};
    return shoal__pool_spawn(h->rt, shoal__tcache_get(h->rt), SHOAL_PID_NONE, NULL, &specs[0],
                             &hold, 0, pid);
}

static shoal_host_gen_t *gen_new(shoal_host_t *h, shoal_config_t *c)
{
    shoal_host_gen_t *g = calloc(1, sizeof *g);
    if (g == NULL)
        return NULL;
    g->config = c;
    g->generation = h->generation;
    g->refs = 1; /* current */
    g->next = h->gens;
    h->gens = g;
    return g;
}

static void gen_unref(shoal_host_t *h, shoal_host_gen_t *g)
{
    if (--g->refs != 0)
        return;
    for (shoal_host_gen_t **pp = &h->gens; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == g) {
            *pp = g->next;
            break;
        }
    }
    shoal__config_free(g->config);
    free(g);
}

static shoal_host_pool_t *pool_add(shoal_host_t *h, const shoal_config_pool_t *cp,
                                   shoal_host_gen_t *from, shoal_pid_t pid)
{
    shoal_host_pool_t *n = shoal__grow(h->pools, h->npools, &h->pools_cap, sizeof *n, 8);
    if (n == NULL)
        return NULL;
    h->pools = n;
    char *name = strdup(cp->name);
    if (name == NULL)
        return NULL;
    shoal_host_pool_t *hp = &h->pools[h->npools++];
    memset(hp, 0, sizeof *hp);
    hp->name = name;
    hp->pid = pid;
    hp->from = from;
    hp->cp = cp;
    from->refs++;
    return hp;
}

static void mailbox_text(uint32_t mailbox, char buf[24])
{
    if (mailbox == SHOAL_MAILBOX_UNBOUNDED)
        snprintf(buf, 24, "unbounded");
    else
        snprintf(buf, 24, "%u", mailbox);
}

int shoal__host_start(shoal_config_t *c, shoal_loader_t *loader, FILE *log_out, shoal_host_t **out,
                      shoal_diag_t *err)
{
    *out = NULL;
    shoal_host_t *h = calloc(1, sizeof *h);
    if (h == NULL) {
        shoal__config_free(c);
        return SHOAL_ENOMEM;
    }
    h->config = c;
    h->loader = loader;
    h->generation = 1;
    h->log_out = log_out;
    h->log_format = c->log.format;
    pthread_mutex_init(&h->log_lock, NULL);
    int rc = SHOAL_ENOMEM;
    shoal_host_gen_t *g = gen_new(h, c);
    if (g == NULL) {
        shoal__config_free(c);
        h->config = NULL;
        goto fail;
    }
    shoal_runtime_opts_t opts;
    shoal_runtime_opts_init(&opts);
    opts.threads = c->runtime.threads;
    opts.throughput = c->runtime.throughput;
    opts.spin_us = c->runtime.spin_us;
    opts.max_actors = c->runtime.max_actors;
    opts.log_level = c->log.level;
    opts.log_fn = runtime_log;
    opts.log_user = h;
    if ((rc = shoal_runtime_create(&h->rt, &opts)) != SHOAL_OK) {
        shoal__diag_set(err, c->file, 0, 0, "cannot create the runtime: %s", shoal_strerror(rc));
        goto fail;
    }
    for (size_t i = 0; i < c->npools; i++) {
        const shoal_config_pool_t *cp = &c->pools[i];
        shoal_pid_t pid;
        if ((rc = start_pool(h, cp, &pid)) != SHOAL_OK) {
            shoal__diag_set(err, cp->at->file, cp->at->line, cp->at->col,
                            "pools.%s: cannot start: %s", cp->name, shoal_strerror(rc));
            goto fail;
        }
        if (pool_add(h, cp, g, pid) == NULL) {
            rc = SHOAL_ENOMEM;
            goto fail;
        }
        if ((rc = shoal_runtime_register(h->rt, cp->name, pid)) != SHOAL_OK) {
            shoal__diag_set(err, cp->at->file, cp->at->line, cp->at->col,
                            "pools.%s: cannot register the name: %s", cp->name, shoal_strerror(rc));
            goto fail;
        }
        char mailbox[24];
        mailbox_text(cp->mailbox, mailbox);
        shoal__host_log(h, SHOAL_LOG_INFO, "pool %s started: %u workers%s, mailbox %s", cp->name,
                        cp->size, cp->nested ? " (pools)" : "", mailbox);
    }
    *out = h;
    return SHOAL_OK;
fail:
    shoal__host_destroy(h);
    return rc;
}

/* ---- the ledger ----------------------------------------------------------- */

void shoal__host_ledger(shoal_host_t *h, char *buf, size_t size)
{
    /* Every pool, the draining ones included: a message accepted before a
     * reload is still counted until it is handled. */
    uint64_t fwd = 0, handled = 0, failed = 0, dropped = 0, refused = 0, queued = 0;
    for (size_t i = 0; i < h->npools; i++) {
        shoal_pool_stats_t st;
        if (h->pools[i].ended || shoal_pool_stats(h->rt, h->pools[i].pid, &st, 1000) != SHOAL_OK)
            st = h->pools[i].last; /* ended: its final counts */
        else
            h->pools[i].last = st;
        fwd += st.messages_forwarded;
        handled += st.messages_handled;
        failed += st.messages_failed;
        dropped += st.messages_dropped;
        refused += st.messages_unhandled;
        queued += st.queue_depth;
    }
    uint64_t settled = handled + failed + dropped;
    snprintf(buf, size,
             "ledger: accepted %" PRIu64 " = handled %" PRIu64 " + failed %" PRIu64
             " + dropped %" PRIu64 " + in flight %" PRIu64 " (queued %" PRIu64
             "); refused %" PRIu64,
             fwd, handled, failed, dropped, fwd > settled ? fwd - settled : 0, queued, refused);
}

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

static const shoal_config_plugin_t *plugin_of(const shoal_config_t *c, const char *name)
{
    for (size_t i = 0; i < c->nplugins; i++)
        if (strcmp(c->plugins[i].name, name) == 0)
            return &c->plugins[i];
    return NULL;
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
    const shoal_config_plugin_t *pa = plugin_of(ca, a->plugin), *pb = plugin_of(cb, b->plugin);
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
    spec_chain(cp, sw->chain, &leaf);
    sw->hold = (shoal_pool_hold_t){module_acquire, module_release, leaf->module};
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
        gen_unref(h, hp->prev);
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
            mailbox_text(run_mailbox, a);
            mailbox_text(cp->mailbox, b);
            note(&log, "%s%s mailbox %s -> %s", log.n ? "; " : "", hp->name, a, b);
        }
    }
    for (size_t i = 0; i < c->npools; i++)
        if (live_pool(h, c->pools[i].name) == NULL)
            note(&log, "%sstart %s", log.n ? "; " : "", c->pools[i].name);
    snprintf(buf, size, "%s", log.n ? log.text : "no change");
}

int shoal__host_reload(shoal_host_t *h, const char *path)
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
        return rc;
    }
    /* Start what is new or changed first: a failure stops those and leaves
     * everything else as it was. */
    size_t first_new = h->npools;
    shoal_host_gen_t *g = NULL;
    h->generation++;
    if ((g = gen_new(h, c)) == NULL) {
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
        if ((rc = start_pool(h, cp, &pid)) != SHOAL_OK) {
            shoal__diag_set(&err, cp->at->file, cp->at->line, cp->at->col,
                            "pools.%s: cannot start: %s", cp->name, shoal_strerror(rc));
            goto undo;
        }
        if (pool_add(h, cp, g, pid) == NULL) {
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
            mailbox_text(run_mailbox, a);
            mailbox_text(cp->mailbox, b2);
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
        gen_unref(h, prev); /* no longer the current one */
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
        gen_unref(h, g);
    shoal__host_log(h, SHOAL_LOG_ERROR,
                    "reload failed (%" PRIu64 " so far), generation %" PRIu64 " keeps running: %s",
                    h->reloads_failed, h->generation, shoal__diag_format(&err, buf, sizeof buf));
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
                gen_unref(h, hp->prev);
                hp->prev = NULL;
            }
        }
        if (hp->draining && hp->ended) {
            free(hp->name);
            if (hp->prev != NULL)
                gen_unref(h, hp->prev);
            gen_unref(h, hp->from);
            continue;
        }
        h->pools[k++] = *hp;
    }
    h->npools = k;
}

/* ---- draining and stopping ----------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

unsigned shoal__host_drain(shoal_host_t *h, uint64_t deadline_ms)
{
    for (size_t i = 0; i < h->npools; i++)
        if (!h->pools[i].ended &&
            shoal_runtime_send_priority(h->rt, h->pools[i].pid, SHOAL_POOL_DRAIN, NULL, 0) ==
                SHOAL_ENOPROC)
            h->pools[i].ended = true;
    double end = now_s() + (double)deadline_ms / 1e3;
    unsigned busy;
    for (;;) {
        busy = 0;
        for (size_t i = 0; i < h->npools; i++) {
            shoal_host_pool_t *hp = &h->pools[i];
            if (hp->ended)
                continue;
            shoal_pool_stats_t st;
            if (shoal_pool_stats(h->rt, hp->pid, &st, 100) == SHOAL_ENOPROC)
                hp->ended = true;
            else
                busy++, hp->last = st;
        }
        if (busy == 0 || now_s() >= end)
            break;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    for (size_t i = 0; i < h->npools; i++) {
        const shoal_host_pool_t *hp = &h->pools[i];
        if (!hp->ended)
            shoal__host_log(h, SHOAL_LOG_WARN,
                            "shutdown: pool %s still busy after %" PRIu64 " ms: %" PRIu64
                            " queued, %u workers, %u retiring",
                            hp->name, deadline_ms, hp->last.queue_depth, hp->last.pool_size,
                            hp->last.retiring);
    }
    return busy;
}

void shoal__host_destroy(shoal_host_t *h)
{
    if (h == NULL)
        return;
    if (h->rt != NULL)
        shoal_runtime_destroy(h->rt); /* stops what is left, joins every thread */
    for (size_t i = 0; i < h->npools; i++)
        free(h->pools[i].name);
    free(h->pools);
    /* After the actors: their args live in these trees. */
    while (h->gens != NULL) {
        shoal_host_gen_t *g = h->gens;
        h->gens = g->next;
        shoal__config_free(g->config);
        free(g);
    }
    pthread_mutex_destroy(&h->log_lock);
    free(h);
}

/* ---- the table ----------------------------------------------------------- */

static const char *fmt_ns(char buf[24], uint64_t ns)
{
    if (ns < 10000)
        snprintf(buf, 24, "%" PRIu64 "ns", ns);
    else if (ns < 10000000)
        snprintf(buf, 24, "%" PRIu64 "us", ns / 1000);
    else
        snprintf(buf, 24, "%" PRIu64 "ms", ns / 1000000);
    return buf;
}

void shoal__host_table(shoal_host_t *h, FILE *out, double seconds, bool header)
{
    fprintf(out, "%s-- generation %" PRIu64 " --\n", header ? "" : "\n", h->generation);
    if (header)
        fprintf(out, "%-16s %5s %10s %8s %9s %8s %8s %8s %8s %s\n", "pool", "size", "rate/s",
                "depth", "refused", "failed", "restarts", "wait_p50", "wait_p99", "state");
    for (size_t i = 0; i < h->npools; i++) {
        shoal_host_pool_t *hp = &h->pools[i];
        shoal_pool_stats_t st;
        if (hp->ended || shoal_pool_stats(h->rt, hp->pid, &st, 1000) != SHOAL_OK) {
            fprintf(out, "%-16s %5s\n", hp->name, "ended");
            continue;
        }
        double dt = seconds > 0 ? seconds : 1;
        char p50[24], p99[24];
        fprintf(out,
                "%-16s %5u %10.0f %8" PRIu64 " %9" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8s %8s %s\n",
                hp->name, st.pool_size,
                (double)(st.messages_forwarded - hp->last.messages_forwarded) / dt, st.queue_depth,
                st.messages_unhandled - hp->last.messages_unhandled,
                st.messages_failed - hp->last.messages_failed, st.worker_restarts,
                fmt_ns(p50, st.queue_wait_ns[0]), fmt_ns(p99, st.queue_wait_ns[2]),
                st.state == SHOAL_POOL_DEGRADED   ? "degraded"
                : st.state == SHOAL_POOL_DRAINING ? "draining"
                                                  : "running");
        hp->last = st;
    }
    fflush(out);
}
