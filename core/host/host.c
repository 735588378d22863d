/* host.c - a runtime built from a config: pools started from their specs
 * (plugin behaviours held by their modules), names registered, config
 * generations, logs in the config's format, the ledger, the table, a drain
 * with a deadline. Reloading is reload.c. See host.h.
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
#include "sched/monitor.h"

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

shoal_pool_hold_t shoal__host_hold(shoal_module_t *m)
{
    return (shoal_pool_hold_t){module_acquire, module_release, m};
}

/* The spec chain of a configured pool: specs[0] is the pool itself, each
 * nested level the next; the leaf runs the plugin behaviour. */
void shoal__host_spec_chain(const shoal_config_pool_t *cp, shoal_pool_spec_t *specs,
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

int shoal__host_start_pool(shoal_host_t *h, const shoal_config_pool_t *cp, shoal_pid_t *pid)
{
    shoal_pool_spec_t specs[SHOAL_POOL_MAX_DEPTH];
    const shoal_config_pool_t *leaf = NULL;
    shoal__host_spec_chain(cp, specs, &leaf);
    shoal_pool_hold_t hold = shoal__host_hold(leaf->module);
    return shoal__pool_spawn(h->rt, shoal__tcache_get(h->rt), SHOAL_PID_NONE, NULL, &specs[0],
                             &hold, 0, pid);
}

shoal_host_gen_t *shoal__host_gen_new(shoal_host_t *h, shoal_config_t *c)
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

void shoal__host_gen_unref(shoal_host_t *h, shoal_host_gen_t *g)
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

shoal_host_pool_t *shoal__host_pool_add(shoal_host_t *h, const shoal_config_pool_t *cp,
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

void shoal__host_mailbox_text(uint32_t mailbox, char buf[24])
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
    shoal_host_gen_t *g = shoal__host_gen_new(h, c);
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
    opts.stall_warn_ms = (unsigned)c->runtime.stall_warn_ms; /* at most a day (schema.c) */
    opts.max_extra_threads = c->runtime.max_extra_threads == SHOAL_CONFIG_AUTO ? 0
                             : c->runtime.max_extra_threads == 0
                                 ? SHOAL_EXTRA_THREADS_NONE
                                 : (int)c->runtime.max_extra_threads;
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
        if ((rc = shoal__host_start_pool(h, cp, &pid)) != SHOAL_OK) {
            shoal__diag_set(err, cp->at->file, cp->at->line, cp->at->col,
                            "pools.%s: cannot start: %s", cp->name, shoal_strerror(rc));
            goto fail;
        }
        if (shoal__host_pool_add(h, cp, g, pid) == NULL) {
            rc = SHOAL_ENOMEM;
            goto fail;
        }
        if ((rc = shoal_runtime_register(h->rt, cp->name, pid)) != SHOAL_OK) {
            shoal__diag_set(err, cp->at->file, cp->at->line, cp->at->col,
                            "pools.%s: cannot register the name: %s", cp->name, shoal_strerror(rc));
            goto fail;
        }
        char mailbox[24];
        shoal__host_mailbox_text(cp->mailbox, mailbox);
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

typedef struct sums_s {
    uint64_t fwd, handled, failed, dropped, refused, queued;
} sums_t;

static void add_stats(sums_t *s, const shoal_pool_stats_t *st)
{
    s->fwd += st->messages_forwarded;
    s->handled += st->messages_handled;
    s->failed += st->messages_failed;
    s->dropped += st->messages_dropped;
    s->refused += st->messages_unhandled;
    s->queued += st->queue_depth;
}

static void ledger_text(const sums_t *s, char *buf, size_t size)
{
    uint64_t settled = s->handled + s->failed + s->dropped;
    snprintf(buf, size,
             "ledger: accepted %" PRIu64 " = handled %" PRIu64 " + failed %" PRIu64
             " + dropped %" PRIu64 " + in flight %" PRIu64 " (queued %" PRIu64
             "); refused %" PRIu64,
             s->fwd, s->handled, s->failed, s->dropped, s->fwd > settled ? s->fwd - settled : 0,
             s->queued, s->refused);
}

void shoal__host_ledger(shoal_host_t *h, char *buf, size_t size)
{
    /* Every pool, the draining ones included: a message accepted before a
     * reload is still counted until it is handled. */
    sums_t s = {0};
    for (size_t i = 0; i < h->npools; i++) {
        shoal_pool_stats_t st;
        if (h->pools[i].ended || shoal_pool_stats(h->rt, h->pools[i].pid, &st, 1000) != SHOAL_OK)
            st = h->pools[i].last; /* ended: its final counts */
        else
            h->pools[i].last = st;
        add_stats(&s, &st);
    }
    ledger_text(&s, buf, size);
}

/* ---- stalls ------------------------------------------------------------------ */

/* The current stalls (all: past the hand-off mark; else past stall_warn),
 * malloc'd; *n how many. NULL with *n = 0 when there are none. */
static shoal_stall_t *stalls_now(shoal_host_t *h, bool all, size_t *n)
{
    size_t want = shoal__stalls(h->rt, NULL, 0, all);
    shoal_stall_t *s = want != 0 ? calloc(want, sizeof *s) : NULL;
    *n = s != NULL ? shoal__stalls(h->rt, s, want, all) : 0;
    if (*n > want)
        *n = want; /* more came meanwhile: the ones copied */
    return s;
}

/* "pool api, behaviour echo, thread 1", as the monitor's lines say it. */
static void stall_where(const shoal_stall_t *s, char *buf, size_t size)
{
    if (s->pool[0] != '\0')
        snprintf(buf, size, "pool %s, behaviour %s, thread %u", s->pool, s->behaviour, s->thread);
    else
        snprintf(buf, size, "behaviour %s, thread %u", s->behaviour, s->thread);
}

#define STALL_LINES_MAX 16

const char *shoal__host_stall_lines(shoal_host_t *h)
{
    size_t n;
    shoal_stall_t *s = stalls_now(h, false, &n);
    size_t need = 64 + (n < STALL_LINES_MAX ? n : STALL_LINES_MAX) * 400;
    if (need > h->stall_cap) {
        char *t = realloc(h->stall_text, need);
        if (t == NULL) {
            free(s);
            return "";
        }
        h->stall_text = t;
        h->stall_cap = need;
    }
    size_t len = 0;
    h->stall_text[0] = '\0';
    for (size_t i = 0; i < n && i < STALL_LINES_MAX; i++) {
        char where[224];
        stall_where(&s[i], where, sizeof where);
        len += (size_t)snprintf(h->stall_text + len, h->stall_cap - len,
                                "stalled <%" PRIu32 ".%" PRIu32 "> %s for %" PRIu64 " ms (%s)\n",
                                shoal__pid_slot(s[i].pid), shoal__pid_gen(s[i].pid), s[i].name,
                                s[i].elapsed_ns / 1000000u, where);
    }
    if (n > STALL_LINES_MAX)
        len += (size_t)snprintf(h->stall_text + len, h->stall_cap - len, "stalled: %zu more\n",
                                n - STALL_LINES_MAX);
    uint64_t stalls, started, extra;
    shoal__monitor_counts(h->rt, &stalls, &started, &extra);
    if (extra != 0)
        snprintf(h->stall_text + len, h->stall_cap - len,
                 "compensating threads %" PRIu64 " (for handlers that do not return)\n", extra);
    free(s);
    return h->stall_text;
}

/* ---- draining and stopping ----------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int shoal__host_drain(shoal_host_t *h, uint64_t deadline_ms, bool (*interrupted)(void *), void *arg)
{
    for (size_t i = 0; i < h->npools; i++) {
        h->pools[i].answered = false;
        if (!h->pools[i].ended &&
            shoal_runtime_send_priority(h->rt, h->pools[i].pid, SHOAL_POOL_DRAIN, NULL, 0) ==
                SHOAL_ENOPROC)
            h->pools[i].ended = true;
    }
    double end = now_s() + (double)deadline_ms / 1e3;
    unsigned busy;
    for (;;) {
        busy = 0;
        for (size_t i = 0; i < h->npools; i++) {
            shoal_host_pool_t *hp = &h->pools[i];
            if (interrupted != NULL && interrupted(arg))
                return -1;
            if (hp->ended)
                continue;
            /* At most 100 ms, and never much past the deadline: a pool
             * whose actor gets no thread must not stretch it. */
            double left_ms = (end - now_s()) * 1e3;
            uint64_t wait_ms = left_ms >= 100 ? 100 : left_ms > 1 ? (uint64_t)left_ms : 1;
            shoal_pool_stats_t st;
            int rc = shoal_pool_stats(h->rt, hp->pid, &st, wait_ms);
            if (rc == SHOAL_ENOPROC) {
                hp->ended = true;
                continue;
            }
            busy++;
            if (rc == SHOAL_OK) { /* else (timed out) st holds nothing: keep the last */
                hp->last = st;
                hp->answered = true;
            }
        }
        if (busy == 0 || now_s() >= end)
            break;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    for (size_t i = 0; i < h->npools; i++) {
        shoal_host_pool_t *hp = &h->pools[i];
        if (hp->ended)
            continue;
        if (hp->answered) {
            shoal__host_log(h, SHOAL_LOG_WARN,
                            "shutdown: pool %s still busy after %" PRIu64 " ms: %" PRIu64
                            " queued, %u workers, %u retiring",
                            hp->name, deadline_ms, hp->last.queue_depth, hp->last.pool_size,
                            hp->last.retiring);
        } else if (shoal__pool_peek(h->rt, hp->pid, &hp->last) == SHOAL_OK) {
            /* Its actor got no thread: its counters, read without it. */
            shoal__host_log(h, SHOAL_LOG_WARN,
                            "shutdown: pool %s still busy after %" PRIu64 " ms: %" PRIu64
                            " queued in its %u workers (its actor did not answer)",
                            hp->name, deadline_ms, hp->last.queue_depth, hp->last.pool_size);
        } else {
            hp->ended = true; /* it ended after all: its last counts stand */
            busy--;
        }
    }
    return (int)busy;
}

void shoal__host_report_lost(shoal_host_t *h)
{
    size_t n;
    shoal_stall_t *s = stalls_now(h, true, &n);
    for (size_t i = 0; i < n; i++) {
        char where[224];
        stall_where(&s[i], where, sizeof where);
        shoal__host_log(h, SHOAL_LOG_WARN,
                        "<%" PRIu32 ".%" PRIu32
                        "> %s: shutdown: still in its handler after %.1f s (%s)",
                        shoal__pid_slot(s[i].pid), shoal__pid_gen(s[i].pid), s[i].name,
                        (double)s[i].elapsed_ns / 1e9, where);
    }
    free(s);
    /* The counts as last known (drain): whatever is not settled now never
     * will be, and counts as dropped. */
    sums_t sum = {0};
    for (size_t i = 0; i < h->npools; i++)
        add_stats(&sum, &h->pools[i].last);
    uint64_t settled = sum.handled + sum.failed + sum.dropped;
    uint64_t lost = sum.fwd > settled ? sum.fwd - settled : 0, queued = sum.queued;
    sum.dropped += lost;
    sum.queued = 0;
    char ledger[320];
    ledger_text(&sum, ledger, sizeof ledger);
    shoal__host_log(h, SHOAL_LOG_WARN,
                    "shutdown: %" PRIu64 " message%s lost (%" PRIu64
                    " queued, the rest in handlers that did not return), counted as dropped; %s",
                    lost, lost == 1 ? "" : "s", queued < lost ? queued : lost, ledger);
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
    free(h->stall_text);
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
