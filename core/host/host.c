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

#include "host/code.h"
#include "host/isolated.h"
#include "host/source.h"
#include "pool/pool.h"
#include "runtime/fault.h"
#include "runtime/grow.h"
#include "runtime/runtime.h"
#include "sched/futex.h"
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
        fprintf(h->log_out, "{\"ts\":\"%s\",\"gen\":%" PRIu64 ",\"level\":\"%s\"", when, h->log_gen,
                lv);
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
        if (h->log_tag[0] != '\0') {
            fputs(",\"process\":", h->log_out);
            json_string(h->log_out, h->log_tag);
        }
        fputs(",\"msg\":", h->log_out);
        json_string(h->log_out, msg);
        fputs("}\n", h->log_out);
    } else {
        fprintf(h->log_out, "%s gen=%" PRIu64 " %s %s%s%s%s\n", when, h->log_gen, lv,
                h->log_tag[0] ? "[" : "", h->log_tag, h->log_tag[0] ? "] " : "", rest);
    }
    fflush(h->log_out);
    /* relaxed: a count the table compares with what it saw (table.c) */
    atomic_fetch_add_explicit(&h->log_lines, 1, memory_order_relaxed);
    pthread_mutex_unlock(&h->log_lock);
}

static void runtime_log(void *user, int level, const char *line) { emit(user, level, line); }

void shoal__host_set_generation(shoal_host_t *h, uint64_t gen, int log_format)
{
    pthread_mutex_lock(&h->log_lock); /* emit() reads both under it, on any thread */
    h->log_gen = gen;
    h->log_format = log_format;
    pthread_mutex_unlock(&h->log_lock);
    /* A crash report says what the log lines say. */
    shoal__fault_set_generation(gen);
    shoal__fault_set_format(log_format == SHOAL_LOG_FORMAT_JSON ? SHOAL_FAULT_JSON
                                                                : SHOAL_FAULT_TEXT);
}

void shoal__host_log(shoal_host_t *h, int level, const char *fmt, ...)
{
    /* The runtime's level: fixed at start, like its own lines' (any thread). */
    if (level > h->rt_log_level)
        return;
    char line[2048]; /* a reload line names every change */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    emit(h, level, line);
}

/* ---- starting ------------------------------------------------------------ */

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
        s->kind = (uint32_t)p->kind;
        s->strategy = (uint32_t)p->strategy;
        s->prefetch = p->prefetch;
        s->buffer = p->buffer;
        s->redeliver = p->redeliver;
        s->idle_timeout_ms = p->idle_timeout_ms;
        s->max_waiting = p->max_waiting;
        s->autoscale = p->autoscale;
        s->checkout = p->checkout; /* its group is the config's string: the pool copies it */
        s->source = p->src_beh;    /* its args come with the code, as the workers' do */
        if (p->nested != NULL) {
            s->worker_pool = &specs[i + 1];
        } else {
            s->worker = p->beh;
            *leaf = p;
        }
    }
}

int shoal__host_isolated_spec(const shoal_config_t *c, const shoal_config_pool_t *cp, uint64_t gen,
                              shoal_pool_spec_t *specs, shoal_remote_launch_t *launch, char *why,
                              size_t why_size)
{
    const shoal_config_pool_t *leaf = NULL;
    shoal__host_spec_chain(cp, specs, &leaf);
    specs[0].worker_pool = NULL; /* the nesting is the child's */
    specs[0].worker = leaf->beh;
    return shoal__isolated_launch(c, cp, gen, launch, why, why_size);
}

int shoal__host_start_pool(shoal_host_t *h, const shoal_config_t *c, const shoal_config_pool_t *cp,
                           uint64_t gen, const shoal_pool_opts_t *opts, shoal_pid_t *pid, char *why,
                           size_t why_size)
{
    shoal_pool_spec_t specs[SHOAL_POOL_MAX_DEPTH];
    const shoal_config_pool_t *leaf = NULL;
    shoal__host_spec_chain(cp, specs, &leaf);
    shoal_pool_opts_t iso = {0};
    shoal_remote_launch_t launch;
    if (cp->isolation == SHOAL_ISOLATION_PROCESS) {
        int rc = shoal__host_isolated_spec(c, cp, gen, specs, &launch, why, why_size);
        if (rc != SHOAL_OK)
            return rc;
        iso.remote = &launch;
        opts = &iso;
    }
    /* The parent of an isolated pool holds the code too: its spec names
     * the behaviour, and a restart hands the same copy to the new child. */
    shoal_code_t *code = NULL;
    int rc = shoal__host_pull_spec(h, cp, &specs[0], &code, why, why_size);
    if (rc != SHOAL_OK) {
        if (iso.remote != NULL)
            launch.release(launch.user);
        return rc;
    }
    for (size_t i = 0; i < SHOAL_POOL_MAX_DEPTH; i++) {
        if (specs[i].worker != NULL) {
            specs[i].worker_args = shoal__code_args(code);
            break;
        }
    }
    shoal_pool_hold_t hold = shoal__code_hold(code);
    rc = shoal__pool_start_ex(h->rt, &specs[0], &hold, opts, SHOAL_HOST_START_TIMEOUT_MS, pid, why,
                              why_size);
    shoal__code_release(code); /* the pool holds its own */
    return rc;
}

shoal_host_pool_t *shoal__host_track(shoal_host_t *h, shoal_host_pool_t **list, size_t *n,
                                     size_t *cap, const shoal_config_pool_t *cp, shoal_pid_t pid,
                                     uint64_t gen)
{
    shoal_host_pool_t *grown = shoal__grow(*list, *n, cap, sizeof *grown, 8);
    if (grown == NULL)
        return NULL;
    *list = grown;
    char *name = strdup(cp->name);
    shoal_pool_t *rec = name != NULL ? shoal__pool_find(h->rt, pid) : NULL;
    if (rec == NULL) { /* out of memory, or it has ended already */
        free(name);
        return NULL;
    }
    shoal_host_pool_t *hp = &(*list)[(*n)++];
    memset(hp, 0, sizeof *hp);
    hp->name = name;
    hp->pid = pid;
    hp->rec = rec;
    hp->gen = gen;
    hp->cp = cp;
    return hp;
}

shoal_host_pool_t *shoal__host_pool_add(shoal_host_t *h, const shoal_config_pool_t *cp,
                                        shoal_pid_t pid, uint64_t gen)
{
    /* (its dead_letter started before it: the newest of that name) */
    shoal_pid_t dl = cp->dead_letter ? shoal__host_pool_pid(h, cp->dead_letter) : SHOAL_PID_NONE;
    shoal_host_pool_t *hp =
        shoal__host_track(h, &h->pools, &h->npools, &h->pools_cap, cp, pid, gen);
    if (hp != NULL)
        hp->dead_letter = dl;
    return hp;
}

void shoal__host_peek(const shoal_host_pool_t *hp, shoal_pool_stats_t *st)
{
    shoal__pool_peek(hp->rec, st);
}

/* The counts of one entry of gone[] for gen, added if missing. */
static shoal_host_counts_t *gone_of(shoal_host_t *h, uint64_t gen)
{
    for (size_t i = 0; i < h->ngone; i++)
        if (h->gone[i].gen == gen)
            return &h->gone[i];
    shoal_host_counts_t *n = shoal__grow(h->gone, h->ngone, &h->gone_cap, sizeof *n, 8);
    if (n == NULL)
        return NULL;
    h->gone = n;
    size_t at = h->ngone++;
    while (at > 0 && h->gone[at - 1].gen > gen) { /* oldest first */
        h->gone[at] = h->gone[at - 1];
        at--;
    }
    h->gone[at] = (shoal_host_counts_t){.gen = gen};
    return &h->gone[at];
}

static void counts_add(shoal_host_counts_t *c, const shoal_pool_stats_t *st)
{
    c->accepted += st->messages_forwarded;
    c->handled += st->messages_handled;
    c->failed += st->messages_failed;
    c->dropped += st->messages_dropped;
    c->refused += st->messages_unhandled;
    c->dead_lettered += st->dead_lettered;
}

void shoal__host_pool_forget(shoal_host_t *h, size_t i)
{
    shoal_host_pool_t *hp = &h->pools[i];
    shoal_pool_stats_t st;
    shoal__host_peek(hp, &st);
    bool counted = st.messages_forwarded != 0 || st.messages_unhandled != 0;
    shoal_host_counts_t *c = counted ? gone_of(h, hp->gen) : NULL;
    if (c != NULL)
        counts_add(c, &st);
    else if (counted)
        shoal__host_log(h, SHOAL_LOG_ERROR, "out of memory: the ledger loses pool %s's counts",
                        hp->name);
    shoal__host_untrack(h, h->pools, &h->npools, i);
}

void shoal__host_untrack(shoal_host_t *h, shoal_host_pool_t *list, size_t *n, size_t i)
{
    shoal__pool_unref(h->rt, list[i].rec);
    free(list[i].name);
    memmove(&list[i], &list[i + 1], (*n - i - 1) * sizeof *list);
    (*n)--;
}

void shoal__host_log_reserved(shoal_host_t *h)
{
    /* The actor records are address space reserved at once and touched as
     * actors are spawned: say how much, it is what `ulimit -v` counts. */
    shoal__host_log(h, SHOAL_LOG_INFO,
                    "address space: %.1f MiB reserved for %" PRIu32
                    " actors (runtime.max_actors, %zu bytes each)",
                    (double)h->rt->recs_bytes / (1024.0 * 1024.0), h->rt->max_actors,
                    sizeof(shoal_actor_rec_t));
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
    h->rt_log_level = c->log.level;
    pthread_mutex_init(&h->log_lock, NULL);
    shoal__host_set_generation(h, 1, c->log.format);
    shoal_runtime_opts_t opts;
    shoal_runtime_opts_init(&opts);
    opts.threads = c->runtime.threads;
    opts.throughput = c->runtime.throughput;
    opts.spin_us = c->runtime.spin_us;
    opts.max_actors = c->runtime.max_actors;
    opts.max_queued = c->runtime.max_queued;
    opts.stall_warn_ms = (unsigned)c->runtime.stall_warn_ms; /* at most a day (schema.c) */
    opts.max_extra_threads = c->runtime.max_extra_threads == SHOAL_CONFIG_AUTO ? 0
                             : c->runtime.max_extra_threads == 0
                                 ? SHOAL_EXTRA_THREADS_NONE
                                 : (int)c->runtime.max_extra_threads;
    opts.log_level = c->log.level;
    opts.log_fn = runtime_log;
    opts.log_user = h;
    int rc = shoal_runtime_create(&h->rt, &opts);
    if (rc != SHOAL_OK) {
        shoal__diag_set(err, c->file, 0, 0,
                        "cannot create the runtime: %s (it reserves %zu bytes of address space per "
                        "actor: lower runtime.max_actors under a `ulimit -v`)",
                        shoal_strerror(rc), sizeof(shoal_actor_t) + sizeof(shoal_actor_back_t));
        goto fail;
    }
    for (size_t i = 0; i < c->npools; i++) {
        /* dead_letter targets first (config_pull.c), so each pull pool's
         * spec names a running pool */
        const shoal_config_pool_t *cp = &c->pools[c->order[i]];
        shoal_pid_t pid;
        char why[300];
        if ((rc = shoal__host_start_pool(h, c, cp, h->generation, NULL, &pid, why, sizeof why)) !=
            SHOAL_OK) {
            shoal__diag_set(err, cp->at->file, cp->at->line, cp->at->col,
                            "pools.%s: cannot start: %s", cp->name, why);
            goto fail;
        }
        if (shoal__host_pool_add(h, cp, pid, h->generation) == NULL) {
            shoal_runtime_stop_actor(h->rt, pid);
            rc = SHOAL_ENOMEM;
            goto fail;
        }
        if ((rc = shoal_runtime_register(h->rt, cp->name, pid)) != SHOAL_OK) {
            shoal__diag_set(err, cp->at->file, cp->at->line, cp->at->col,
                            "pools.%s: cannot register the name: %s", cp->name, shoal_strerror(rc));
            goto fail;
        }
        char mailbox[24], pull[400];
        shoal__host_mailbox_text(cp->mailbox, mailbox);
        shoal__host_pull_text(cp, pull, sizeof pull);
        shoal__host_log(h, SHOAL_LOG_INFO, "pool %s started: %u worker%s%s, mailbox %s%s", cp->name,
                        cp->size, cp->size == 1 ? "" : "s", cp->nested ? " (pools)" : "", mailbox,
                        pull);
    }
    if ((rc = shoal__host_sources_start(h, err)) != SHOAL_OK) /* after every pool: targets exist */
        goto fail;
    h->started_ns = shoal__now_ns();
    *out = h;
    return SHOAL_OK;
fail:
    shoal__host_destroy(h);
    return rc;
}

/* ---- the ledger ----------------------------------------------------------- */

/* What gen's pools (every generation's when gen is 0) have counted: the
 * forgotten ones' final counts, and the others' read from their records. */
static shoal_host_counts_t ledger_of(shoal_host_t *h, uint64_t gen)
{
    shoal_host_counts_t c = {.gen = gen};
    for (size_t i = 0; i < h->ngone; i++) {
        const shoal_host_counts_t *g = &h->gone[i];
        if (gen == 0 || g->gen == gen) {
            c.accepted += g->accepted;
            c.handled += g->handled;
            c.failed += g->failed;
            c.dropped += g->dropped;
            c.refused += g->refused;
        }
    }
    for (size_t i = 0; i < h->npools; i++) {
        if (gen != 0 && h->pools[i].gen != gen)
            continue;
        shoal_pool_stats_t st;
        shoal__host_peek(&h->pools[i], &st);
        counts_add(&c, &st);
    }
    return c;
}

static void ledger_text(const shoal_host_counts_t *c, char *buf, size_t size)
{
    uint64_t settled = c->handled + c->failed + c->dropped + c->dead_lettered;
    char dl[48] = ""; /* only where a pull pool passed items on */
    if (c->dead_lettered != 0)
        snprintf(dl, sizeof dl, " + dead-lettered %" PRIu64, c->dead_lettered);
    snprintf(buf, size,
             "accepted %" PRIu64 " = handled %" PRIu64 " + failed %" PRIu64 " + dropped %" PRIu64
             "%s + in flight %" PRIu64 "; refused %" PRIu64,
             c->accepted, c->handled, c->failed, c->dropped, dl,
             c->accepted > settled ? c->accepted - settled : 0, c->refused);
}

void shoal__host_ledger(shoal_host_t *h, char *buf, size_t size)
{
    shoal_host_counts_t c = ledger_of(h, 0);
    char text[256];
    ledger_text(&c, text, sizeof text);
    snprintf(buf, size, "ledger: %s", text);
}

void shoal__host_ledgers(shoal_host_t *h, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    /* Every generation that started pools, oldest first. */
    for (uint64_t g = 1; g <= h->generation && n < size; g++) {
        bool any = false;
        for (size_t i = 0; i < h->ngone && !any; i++)
            any = h->gone[i].gen == g;
        for (size_t i = 0; i < h->npools && !any; i++)
            any = h->pools[i].gen == g;
        if (!any)
            continue;
        shoal_host_counts_t c = ledger_of(h, g);
        char text[256];
        ledger_text(&c, text, sizeof text);
        n += (size_t)snprintf(buf + n, size - n, "ledger gen %" PRIu64 ": %s\n", g, text);
    }
    if (n < size) {
        shoal_host_counts_t c = ledger_of(h, 0);
        char text[256];
        ledger_text(&c, text, sizeof text);
        snprintf(buf + n, size - n, "ledger total: %s\n", text);
    }
}

/* ---- memory ---------------------------------------------------------------- */

/* How long the watch waits for an isolated pool's counts, as the table
 * (table.c): shoald's thread must not wait on a supervisor that holds
 * them; the pool is looked at again the next second. */
#define WATCH_PATIENCE_MS 20u

void shoal__host_watch(shoal_host_t *h)
{
    shoal__host_sources_watch(h);
    for (size_t i = 0; i < h->npools; i++) {
        shoal_host_pool_t *hp = &h->pools[i];
        if (hp->cp == NULL || hp->cp->warn_queue == 0)
            continue;
        shoal_pool_stats_t st;
        if (!shoal__pool_peek_within(hp->rec, &st, WATCH_PATIENCE_MS))
            continue;
        uint64_t warn = hp->cp->warn_queue;
        if (!hp->over_warn && st.queue_depth > warn) {
            hp->over_warn = true;
            shoal__host_log(h, SHOAL_LOG_WARN,
                            "pool %s: %" PRIu64 " messages queued, past its warn_queue %" PRIu64
                            " (each holds memory until handled: more workers, bounded mailboxes "
                            "or runtime.max_queued bound it)",
                            hp->name, st.queue_depth, warn);
        } else if (hp->over_warn && st.queue_depth <= warn - warn / 10) {
            hp->over_warn = false;
            shoal__host_log(h, SHOAL_LOG_INFO,
                            "pool %s: %" PRIu64
                            " messages queued, back below its warn_queue %" PRIu64,
                            hp->name, st.queue_depth, warn);
        }
    }
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
        shoal__stall_where(&s[i], where, sizeof where);
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

int shoal__host_wait_ended(const shoal_host_pool_t *list, size_t n, uint64_t end_ns,
                           bool (*interrupted)(void *), void *arg)
{
    /* Each is read from its record: one whose actor gets no thread (every
     * dispatcher thread stuck) neither stretches the deadline nor hides
     * its counts. */
    for (;;) {
        if (interrupted != NULL && interrupted(arg))
            return -1;
        int busy = 0;
        for (size_t i = 0; i < n; i++)
            busy += !shoal__pool_is_ended(list[i].rec);
        if (busy == 0 || shoal__now_ns() >= end_ns)
            return busy;
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

int shoal__host_drain(shoal_host_t *h, uint64_t deadline_ms, bool (*interrupted)(void *), void *arg)
{
    /* One deadline for all: the sources stop first (producers before the
     * pools drain), within it, and the pools drain in what is left. */
    uint64_t end_ns = shoal__deadline_ns(shoal__now_ns(), deadline_ms);
    if (h->nsources != 0) {
        size_t n = h->nsources;
        int left = shoal__host_sources_stop(h, end_ns, interrupted, arg);
        if (left < 0)
            return -1;
        shoal__host_log(h, left ? SHOAL_LOG_WARN : SHOAL_LOG_INFO,
                        "shutdown: %zu source%s stopped%s, the pools drain", n - (size_t)left,
                        n - (size_t)left == 1 ? "" : "s", left ? " (some did not)" : "");
    }
    /* dead-letter targets after the pools that send to them (host_pull.c) */
    int busy = shoal__host_pull_drain_all(h, end_ns, interrupted, arg);
    if (busy < 0)
        return -1;
    for (size_t i = 0; i < h->npools; i++) {
        const shoal_host_pool_t *hp = &h->pools[i];
        if (shoal__pool_is_ended(hp->rec))
            continue;
        shoal_pool_stats_t st;
        shoal__host_peek(hp, &st);
        shoal__host_log(h, SHOAL_LOG_WARN,
                        "shutdown: pool %s still busy after %" PRIu64 " ms: %" PRIu64
                        " in flight, %u worker%s, %u retiring",
                        hp->name, deadline_ms, st.queue_depth, st.pool_size,
                        st.pool_size == 1 ? "" : "s", st.retiring);
    }
    return busy;
}

void shoal__host_report_lost(shoal_host_t *h)
{
    size_t n;
    shoal_stall_t *s = stalls_now(h, true, &n);
    for (size_t i = 0; i < n; i++) {
        char where[224];
        shoal__stall_where(&s[i], where, sizeof where);
        shoal__host_log(h, SHOAL_LOG_WARN,
                        "<%" PRIu32 ".%" PRIu32
                        "> %s: shutdown: still in its handler after %.1f s (%s)",
                        shoal__pid_slot(s[i].pid), shoal__pid_gen(s[i].pid), s[i].name,
                        (double)s[i].elapsed_ns / 1e9, where);
    }
    free(s);
    /* Whatever is not settled now never will be: counted as dropped. */
    shoal_host_counts_t c = ledger_of(h, 0);
    uint64_t settled = c.handled + c.failed + c.dropped;
    uint64_t lost = c.accepted > settled ? c.accepted - settled : 0;
    c.dropped += lost;
    char ledger[256];
    ledger_text(&c, ledger, sizeof ledger);
    shoal__host_log(h, SHOAL_LOG_WARN,
                    "shutdown: %" PRIu64 " message%s lost (queued, or in handlers that did not "
                    "return), counted as dropped; ledger: %s",
                    lost, lost == 1 ? "" : "s", ledger);
}

void shoal__host_destroy(shoal_host_t *h)
{
    if (h == NULL)
        return;
    /* The host's references on the records first: the runtime frees every
     * record it still has when it is destroyed. */
    for (size_t i = 0; i < h->npools; i++) {
        shoal__pool_unref(h->rt, h->pools[i].rec);
        free(h->pools[i].name);
    }
    free(h->pools);
    shoal__host_sources_free(h);
    if (h->rt != NULL)
        shoal_runtime_destroy(h->rt); /* stops what is left, joins every thread */
    /* After the actors: the modules they held are released with them. */
    shoal__config_free(h->config);
    free(h->gone);
    pthread_mutex_destroy(&h->log_lock);
    free(h->stall_text);
    free(h);
}
