/* source.c - sources (source.h): singleton actors, each kept in a record
 * like a pool's of one worker, opened with count_sends.
 */
#include "host/source.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "pool/pool.h"
#include "runtime/runtime.h"

/* Tracks a source started from cp in generation gen. NULL on ENOMEM or
 * when it has ended already. */
static shoal_host_pool_t *source_add(shoal_host_t *h, const shoal_config_pool_t *cp,
                                     shoal_pid_t pid, uint64_t gen)
{
    return shoal__host_track(h, &h->sources, &h->nsources, &h->sources_cap, cp, pid, gen);
}

static void source_forget(shoal_host_t *h, size_t i)
{
    shoal__host_untrack(h, h->sources, &h->nsources, i);
}

/* Spawns the source cp describes and waits for its init. held: a
 * reload's, which sends nothing until it commits (SHOAL__POOL_GO:
 * shoal__host_sources_commit). */
static int source_spawn(shoal_host_t *h, const shoal_config_t *c, const shoal_config_pool_t *cp,
                        uint64_t gen, bool held, shoal_diag_t *err)
{
    shoal_pool_opts_t opts = {.count_sends = true, /* shoald's start's or reload's (host.h) */
                              .held = held,
                              .interrupted = h->interrupted,
                              .interrupted_arg = h->interrupted_arg};
    shoal_pid_t pid;
    char why[300];
    int rc = shoal__host_start_pool(h, c, cp, gen, &opts, &pid, why, sizeof why);
    if (rc != SHOAL_OK) {
        shoal__diag_set(err, cp->at->file, cp->at->line, cp->at->col,
                        "sources.%s: cannot start: %s", cp->name, why);
        return rc;
    }
    if (source_add(h, cp, pid, gen) == NULL) {
        shoal_runtime_stop_actor(h->rt, pid);
        shoal__diag_set(err, cp->at->file, cp->at->line, cp->at->col,
                        "sources.%s: out of memory, or it ended at once", cp->name);
        return SHOAL_ENOMEM;
    }
    return SHOAL_OK;
}

int shoal__host_sources_start(shoal_host_t *h, shoal_diag_t *err)
{
    const shoal_config_t *c = h->config;
    for (size_t i = 0; i < c->nsources; i++) {
        const shoal_config_pool_t *cp = &c->sources[i];
        int rc = source_spawn(h, c, cp, h->generation, false, err);
        if (rc != SHOAL_OK)
            return rc;
        if ((rc = shoal_runtime_register(h->rt, cp->name, h->sources[h->nsources - 1].pid)) !=
            SHOAL_OK) {
            shoal__diag_set(err, cp->at->file, cp->at->line, cp->at->col,
                            "sources.%s: cannot register the name: %s", cp->name,
                            shoal_strerror(rc));
            return rc;
        }
        shoal__host_log(h, SHOAL_LOG_INFO, "source %s started: %s.%s", cp->name, cp->plugin,
                        cp->behaviour);
    }
    return SHOAL_OK;
}

/* A source is stopped, not drained: what its mailbox holds is its own
 * (ticks it sent itself). */
static void source_stop(shoal_host_t *h, shoal_host_pool_t *hs)
{
    hs->draining = true;
    hs->cp = NULL;
    shoal_runtime_stop_actor(h->rt, hs->pid);
}

int shoal__host_sources_stop(shoal_host_t *h, uint64_t end_ns, bool (*interrupted)(void *),
                             void *arg)
{
    for (size_t i = 0; i < h->nsources; i++) {
        if (!h->sources[i].draining)
            shoal__names_unregister_pid(h->rt, h->sources[i].name, h->sources[i].pid);
        source_stop(h, &h->sources[i]);
    }
    return shoal__host_wait_ended(h->sources, h->nsources, end_ns, interrupted, arg);
}

/* The live (not stopping) source called name, or NULL. */
static shoal_host_pool_t *live_source(shoal_host_t *h, const char *name, size_t below)
{
    for (size_t i = 0; i < below; i++)
        if (!h->sources[i].draining && strcmp(h->sources[i].name, name) == 0)
            return &h->sources[i];
    return NULL;
}

int shoal__host_sources_prepare(shoal_host_t *h, const shoal_config_t *c, uint64_t gen,
                                size_t *first_new, shoal_diag_t *err)
{
    size_t was = h->nsources;
    *first_new = was;
    for (size_t i = 0; i < c->nsources; i++) {
        const shoal_config_pool_t *cp = &c->sources[i];
        shoal_host_pool_t *old = live_source(h, cp->name, was);
        if (old != NULL && shoal__host_same_actor(old->cp, cp))
            continue;
        int rc = source_spawn(h, c, cp, gen, true, err);
        if (rc != SHOAL_OK)
            return rc;
    }
    return SHOAL_OK;
}

void shoal__host_sources_undo(shoal_host_t *h, size_t first_new)
{
    while (h->nsources > first_new) {
        shoal_runtime_stop_actor(h->rt, h->sources[h->nsources - 1].pid);
        source_forget(h, h->nsources - 1);
    }
}

static void add_note(char *notes, size_t size, size_t *len, const char *verb, const char *name)
{
    if (*len < size)
        *len += (size_t)snprintf(notes + *len, size - *len, "%ssource %s %s", *len ? "; " : "",
                                 name, verb);
}

void shoal__host_sources_commit(shoal_host_t *h, const shoal_config_t *c, uint64_t gen,
                                size_t first_new, char *notes, size_t size)
{
    size_t len = 0;
    notes[0] = '\0';
    for (size_t i = 0; i < first_new; i++) {
        shoal_host_pool_t *hs = &h->sources[i];
        if (hs->draining)
            continue;
        const shoal_config_pool_t *cp = shoal__config_source(c, hs->name);
        bool replaced = false;
        for (size_t j = first_new; j < h->nsources; j++)
            replaced |= strcmp(h->sources[j].name, hs->name) == 0;
        if (cp == NULL || replaced) {
            /* Its name only if still its own: a new pool of this reload
             * may have taken it (a source become a pool), registered
             * before this. */
            if (cp == NULL)
                shoal__names_unregister_pid(h->rt, hs->name, hs->pid);
            add_note(notes, size, &len, cp == NULL ? "removed" : "replaced", hs->name);
            hs->ended_gen = gen;
            source_stop(h, hs);
            continue;
        }
        hs->cp = cp; /* the new generation's entry */
    }
    for (size_t j = first_new; j < h->nsources; j++) {
        shoal_host_pool_t *hs = &h->sources[j];
        shoal_runtime_register(h->rt, hs->name, hs->pid); /* a replaced one: the new PID */
        shoal__host_go(h, hs, NULL); /* it sends from now on (held: source_spawn) */
        /* Replaced by this reload (said above); one of its name that an
         * earlier reload stopped, not forgotten yet, is no matter. */
        bool replaced = false;
        for (size_t i = 0; i < first_new; i++)
            replaced |= h->sources[i].ended_gen == gen && strcmp(h->sources[i].name, hs->name) == 0;
        if (!replaced)
            add_note(notes, size, &len, "started", hs->name);
    }
}

void shoal__host_sources_plan(shoal_host_t *h, const shoal_config_t *c, char *notes, size_t size)
{
    size_t len = 0;
    notes[0] = '\0';
    for (size_t i = 0; i < h->nsources; i++) {
        const shoal_host_pool_t *hs = &h->sources[i];
        if (hs->draining)
            continue;
        const shoal_config_pool_t *cp = shoal__config_source(c, hs->name);
        if (cp == NULL)
            add_note(notes, size, &len, "remove (it stops)", hs->name);
        else if (!shoal__host_same_actor(hs->cp, cp))
            add_note(notes, size, &len, "replace (a new one under its name; the old one stops)",
                     hs->name);
    }
    for (size_t i = 0; i < c->nsources; i++)
        if (live_source(h, c->sources[i].name, h->nsources) == NULL)
            add_note(notes, size, &len, "start", c->sources[i].name);
}

/* running, down (past its restart budget, retried after backoff),
 * stopping, ended. */
static const char *source_state(const shoal_host_t *h, const shoal_host_pool_t *hs,
                                const shoal_pool_stats_t *st)
{
    if (shoal__pool_is_ended(hs->rec))
        return "ended";
    if (hs->draining)
        return "stopping";
    if (!shoal__host_committed(h, hs)) /* a running reload's, held until it commits */
        return "starting";
    return st->state == SHOAL_POOL_DEGRADED ? "down" : "running";
}

void shoal__host_sources_watch(shoal_host_t *h)
{
    for (size_t i = 0; i < h->nsources;) {
        shoal_host_pool_t *hs = &h->sources[i];
        if (hs->draining && shoal__pool_is_quiet(hs->rec)) {
            source_forget(h, i);
            continue;
        }
        i++;
        if (hs->draining)
            continue;
        shoal_pool_stats_t st;
        shoal__host_peek(hs, &st);
        if (st.worker_restarts > hs->seen_restarts) {
            uint64_t n = st.worker_restarts - hs->seen_restarts;
            shoal__host_log(h, SHOAL_LOG_WARN,
                            "source %s: restarted %" PRIu64 " time%s (%" PRIu64 " in all)",
                            hs->name, n, n == 1 ? "" : "s", st.worker_restarts);
            hs->seen_restarts = st.worker_restarts;
        }
        bool down = st.state == SHOAL_POOL_DEGRADED;
        if (down && !hs->down)
            shoal__host_log(h, SHOAL_LOG_WARN,
                            "source %s: down: more than %" PRIu32 " restarts within %" PRIu64
                            " ms; retried after %" PRIu64 " ms (doubling)",
                            hs->name, hs->cp->restart.max, hs->cp->restart.within_ms,
                            hs->cp->restart.backoff_ms);
        else if (!down && hs->down)
            shoal__host_log(h, SHOAL_LOG_INFO, "source %s: running again", hs->name);
        hs->down = down;
    }
}

void shoal__host_sources_table(shoal_host_t *h, FILE *out, double seconds)
{
    double dt = seconds > 0 ? seconds : 1;
    for (size_t i = 0; i < h->nsources; i++) {
        shoal_host_pool_t *hs = &h->sources[i];
        shoal_pool_stats_t st;
        shoal__host_peek(hs, &st);
        /* relaxed: monotonic counts on their own (actor.h) */
        uint64_t sent = atomic_load_explicit(&hs->rec->sends.sent, memory_order_relaxed);
        uint64_t refused = atomic_load_explicit(&hs->rec->sends.refused, memory_order_relaxed);
        fprintf(out, "%-16s %-9s %10.0f %10.0f %16" PRIu64 "\n", hs->name, source_state(h, hs, &st),
                (double)(sent - hs->last_sent) / dt, (double)(refused - hs->last_refused) / dt,
                st.worker_restarts);
        hs->last_sent = sent;
        hs->last_refused = refused;
    }
}

void shoal__host_source_status(shoal_host_t *h, size_t i, char *buf, size_t size)
{
    shoal_host_pool_t *hs = &h->sources[i];
    shoal_pool_stats_t st;
    shoal__host_peek(hs, &st);
    /* relaxed: monotonic counts on their own (actor.h) */
    uint64_t sent = atomic_load_explicit(&hs->rec->sends.sent, memory_order_relaxed);
    uint64_t refused = atomic_load_explicit(&hs->rec->sends.refused, memory_order_relaxed);
    snprintf(buf, size,
             "source %s %s: sent %" PRIu64 ", refused %" PRIu64 ", restarts %" PRIu64 "\n",
             hs->name, source_state(h, hs, &st), sent, refused, st.worker_restarts);
}

size_t shoal__host_sources_running(const shoal_host_t *h)
{
    size_t n = 0;
    for (size_t i = 0; i < h->nsources; i++)
        n += !h->sources[i].draining && shoal__host_committed(h, &h->sources[i]);
    return n;
}

void shoal__host_sources_free(shoal_host_t *h)
{
    for (size_t i = 0; i < h->nsources; i++) {
        shoal__pool_unref(h->rt, h->sources[i].rec);
        free(h->sources[i].name);
    }
    free(h->sources);
    h->sources = NULL;
    h->nsources = 0;
}
