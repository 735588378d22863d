/* host.c - a runtime built from a config: pools started from their specs
 * (plugin behaviours held by their modules) and tracked, names registered,
 * and the host destroyed at the end. Beside it: host_log.c (log lines in
 * the config's format), host_ledger.c (the ledger), host_watch.c (queues
 * past warn_queue, stalled handlers), host_drain.c (a drain with a
 * deadline); reloading is reload.c. See host.h.
 */
#include "host/host.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/code.h"
#include "host/isolated.h"
#include "host/source.h"
#include "pool/pool.h"
#include "runtime/grow.h"
#include "runtime/runtime.h"

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

/* How long a pool's first workers may take to start at shoald's start or
 * in its reloads: a checkout pool's fail by themselves after
 * member_start_timeout, which may be longer. */
static uint64_t start_timeout_ms(const shoal_config_pool_t *cp)
{
    uint64_t t = SHOAL_HOST_START_TIMEOUT_MS;
    if (cp->kind == SHOAL_POOL_KIND_CHECKOUT && cp->checkout.member_start_timeout_ms + 1000 > t)
        t = cp->checkout.member_start_timeout_ms + 1000;
    return t;
}

int shoal__host_start_pool(shoal_host_t *h, const shoal_config_t *c, const shoal_config_pool_t *cp,
                           uint64_t gen, const shoal_pool_opts_t *opts, shoal_pid_t *pid, char *why,
                           size_t why_size)
{
    shoal_pool_spec_t specs[SHOAL_POOL_MAX_DEPTH];
    const shoal_config_pool_t *leaf = NULL;
    shoal__host_spec_chain(cp, specs, &leaf);
    shoal_pool_opts_t iso = {0};
    if (opts != NULL) {
        iso.interrupted = opts->interrupted;
        iso.interrupted_arg = opts->interrupted_arg;
        iso.held = opts->held; /* (an isolated pool's workers are its child's) */
    }
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
    /* Without a way to hear a stop (opts->interrupted: shoald's start and
     * its reloads have one), the 10 s bound: the host thread hears no
     * signal meanwhile. */
    uint64_t timeout = opts != NULL && opts->interrupted != NULL ? start_timeout_ms(cp)
                                                                 : SHOAL_HOST_START_TIMEOUT_MS;
    rc = shoal__pool_start_ex(h->rt, &specs[0], &hold, opts, timeout, pid, why, why_size);
    shoal__code_release(code); /* the pool holds its own */
    return rc;
}

void shoal__host_go(shoal_host_t *h, shoal_host_pool_t *hp, shoal_host_live_t *lv)
{
    shoal__host_go_with(h, hp, lv, NULL);
}

void shoal__host_go_with(shoal_host_t *h, shoal_host_pool_t *hp, shoal_host_live_t *lv,
                         const shoal_pull_handover_t *epic)
{
    int rc;
    if (lv != NULL) {
        shoal_answer_t a;
        rc = shoal__host_live_rc(lv,
                                 shoal_runtime_call_priority(h->rt, hp->pid, SHOAL__POOL_GO, epic,
                                                             epic != NULL ? sizeof *epic : 0,
                                                             shoal__host_live_ms(lv), &a));
        if (rc == SHOAL_OK) {
            rc = a.status;
            shoal_answer_release(&a);
        }
    } else {
        rc = shoal_runtime_send_priority(h->rt, hp->pid, SHOAL__POOL_GO, epic,
                                         epic != NULL ? sizeof *epic : 0);
    }
    hp->go_owed = rc == SHOAL_ENOMEM;
    if (hp->go_owed && epic != NULL && epic != hp->owed_epic &&
        (hp->owed_epic = malloc(sizeof *epic)) != NULL)
        *hp->owed_epic = *epic; /* told again with it (without memory: from the start) */
    if (!hp->go_owed) {
        free(hp->owed_epic);
        hp->owed_epic = NULL;
    }
    if (rc == SHOAL_ENOPROC && epic != NULL)
        shoal__host_log(h, SHOAL_LOG_WARN,
                        "reload: %s ended before it was told the reload committed: the epic "
                        "handed over to it (%" PRIu64 " items sent) ends there",
                        hp->name, epic->items);
    if (rc == SHOAL_ETIMEDOUT) /* still queued: carried out when its actor runs */
        shoal__host_log(h, SHOAL_LOG_WARN,
                        "reload: %s was not told within %d ms that the reload committed (its "
                        "actor did not run: every dispatcher thread busy?); it is when the actor "
                        "runs, and until then it handles nothing",
                        hp->name, SHOAL_HOST_LIVE_MS);
    else if (rc != SHOAL_OK && rc != SHOAL_ENOPROC) /* ENOPROC: it has ended already */
        shoal__host_log(h, SHOAL_LOG_ERROR,
                        "reload: %s could not be told the reload committed (%s): it handles "
                        "nothing until it is%s",
                        hp->name, shoal_strerror(rc),
                        hp->go_owed ? "; told again every second" : "");
}

static void go_again(shoal_host_t *h, shoal_host_pool_t *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (list[i].go_owed && !list[i].draining)
            shoal__host_go_with(h, &list[i], NULL, list[i].owed_epic);
}

void shoal__host_go_owed(shoal_host_t *h)
{
    go_again(h, h->pools, h->npools);
    go_again(h, h->sources, h->nsources);
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
    if (hp != NULL && (hp->dead_letter = dl) != SHOAL_PID_NONE)
        h->ndead_letters++;
    return hp;
}

void shoal__host_peek(const shoal_host_pool_t *hp, shoal_pool_stats_t *st)
{
    shoal__pool_peek(hp->rec, st);
}

void shoal__host_entry_release(shoal_host_t *h, shoal_host_pool_t *e)
{
    if (e->dead_letter != SHOAL_PID_NONE)
        h->ndead_letters--;
    shoal__pool_unref(h->rt, e->rec);
    free(e->name);
    free(e->owed_epic);
}

void shoal__host_untrack(shoal_host_t *h, shoal_host_pool_t *list, size_t *n, size_t i)
{
    shoal__host_entry_release(h, &list[i]);
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

/* After a failed start: every actor stopped, then until no handler is
 * left in plugin code, drain_ms, or `interrupted` says a signal came.
 * Each still there is logged; false then (the runtime cannot be
 * destroyed: its threads cannot be joined). */
static bool start_settled(shoal_host_t *h, uint64_t drain_ms, bool (*interrupted)(void *),
                          void *arg)
{
    for (size_t i = 0; i < h->npools; i++)
        shoal_runtime_stop_actor(h->rt, h->pools[i].pid);
    for (size_t i = 0; i < h->nsources; i++)
        shoal_runtime_stop_actor(h->rt, h->sources[i].pid);
    return shoal__host_wait_stuck(h, drain_ms, interrupted, arg, "start") == 0;
}

int shoal__host_start(shoal_config_t *c, shoal_loader_t *loader, FILE *log_out, shoal_host_t **out,
                      shoal_diag_t *err)
{
    int rc = shoal__host_start_ex(c, loader, log_out, NULL, NULL, out, err);
    if (rc != SHOAL_OK && *out != NULL) { /* stuck: waits for it, as it says */
        shoal__host_destroy(*out);
        *out = NULL;
    }
    return rc;
}

int shoal__host_create(shoal_config_t *c, shoal_loader_t *loader, FILE *log_out, shoal_host_t **out,
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
    opts.log_fn = shoal__host_runtime_log;
    opts.log_user = h;
    int rc = shoal_runtime_create(&h->rt, &opts);
    if (rc != SHOAL_OK) {
        shoal__diag_set(err, c->file, 0, 0,
                        "cannot create the runtime: %s (it reserves %zu bytes of address space per "
                        "actor: lower runtime.max_actors under a `ulimit -v`)",
                        shoal_strerror(rc), sizeof(shoal_actor_t) + sizeof(shoal_actor_back_t));
        shoal__host_destroy(h);
        return rc;
    }
    h->starting = true;
    h->starting_since_ns = shoal__now_ns();
    *out = h;
    return SHOAL_OK;
}

int shoal__host_start_pools(shoal_host_t *h, bool (*interrupted)(void *), void *arg,
                            shoal_diag_t *err)
{
    const shoal_config_t *c = h->config;
    int rc = SHOAL_OK;
    shoal_pool_opts_t po = {.interrupted = interrupted, .interrupted_arg = arg};
    for (size_t i = 0; i < c->npools; i++) {
        /* dead_letter targets first (config_pull.c), so each pull pool's
         * spec names a running pool */
        const shoal_config_pool_t *cp = &c->pools[c->order[i]];
        shoal_pid_t pid;
        char why[300];
        shoal__host_step(h, "starting pool %s, %zu of %zu (its first workers run init)", cp->name,
                         i + 1, c->npools);
        if ((rc = shoal__host_start_pool(h, c, cp, h->generation, &po, &pid, why, sizeof why)) !=
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
    shoal__host_step(h, "starting the sources (they run init)");
    h->interrupted = interrupted; /* the sources' starts (source.c) */
    h->interrupted_arg = arg;
    rc = shoal__host_sources_start(h, err); /* after every pool: targets exist */
    h->interrupted = NULL;
    if (rc != SHOAL_OK)
        goto fail;
    h->started_ns = shoal__now_ns();
    h->starting = false;
    h->step[0] = '\0';
    return SHOAL_OK;
fail:
    shoal__host_step(h, "the start is given up: stopping what it started");
    if (!start_settled(h, c->shutdown.drain_ms, interrupted, arg))
        h->stuck = true;
    return rc;
}

int shoal__host_start_ex(shoal_config_t *c, shoal_loader_t *loader, FILE *log_out,
                         bool (*interrupted)(void *), void *arg, shoal_host_t **out,
                         shoal_diag_t *err)
{
    int rc = shoal__host_create(c, loader, log_out, out, err);
    if (rc != SHOAL_OK)
        return rc;
    shoal_host_t *h = *out;
    if ((rc = shoal__host_start_pools(h, interrupted, arg, err)) != SHOAL_OK && !h->stuck) {
        shoal__host_destroy(h);
        *out = NULL;
    }
    return rc;
}

void shoal__host_step(shoal_host_t *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->step, sizeof h->step, fmt, ap);
    va_end(ap);
}

/* ---- stopping ------------------------------------------------------------ */

bool shoal__host_stop_came(void *arg)
{
    shoal_host_t *h = arg;
    return h->interrupted != NULL && h->interrupted(h->interrupted_arg);
}

void shoal__host_keep_until_end(shoal_host_t *h, shoal_config_t *c)
{
    if (c == NULL)
        return;
    shoal_config_t **k = realloc(h->kept, (h->nkept + 1) * sizeof *k);
    if (k == NULL) {
        shoal__config_free(c);
        return;
    }
    h->kept = k;
    h->kept[h->nkept++] = c;
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
        free(h->pools[i].owed_epic);
    }
    free(h->pools);
    shoal__host_sources_free(h);
    if (h->rt != NULL)
        shoal_runtime_destroy(h->rt); /* stops what is left, joins every thread */
    /* After the actors: the modules they held are released with them. */
    shoal__config_free(h->config);
    for (size_t i = 0; i < h->nkept; i++)
        shoal__config_free(h->kept[i]);
    free(h->kept);
    free(h->gone);
    pthread_mutex_destroy(&h->log_lock);
    free(h->stall_text);
    free(h);
}
