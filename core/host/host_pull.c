/* host_pull.c - a pull pool (config_pull.c) in the host: what its spec
 * takes beyond the chain (its dead_letter's PID, its source's code and
 * args), and what a reload does to it, beside what reload.c does to every
 * pool:
 *
 *   size                        live, as for every pool (reload.c)
 *   prefetch, buffer            live: SHOAL_POOL_SET_PREFETCH, _SET_BUFFER,
 *                               once every fallible step has succeeded (as
 *                               SET_SIZE and SET_MAILBOX are)
 *   worker, args                the workers swapped (reload.c; the source
 *                               rides along in the new code, code.h)
 *   kind, source, source_args,  a new pool under the name; the old one
 *   redeliver, dead_letter      drains. The swap machinery starts workers,
 *                               not a pool's source, and the spec's
 *                               redeliver and dead_letter have no command:
 *                               replacing is what changes them with
 *                               nothing lost (the old pool's buffer is
 *                               worked off by its own workers as it drains)
 *   a dead_letter target that   the pool naming it is replaced too: its
 *   is itself replaced          spec holds the target's PID (reload.c)
 *
 * Draining (a reload's replaced pools, shutdown): a pool that a pull pool
 * not yet ended sends dead letters to is told to drain only once that one
 * has ended, so what the pull pool fails for good on its way out still
 * finds its dead letter taking messages.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "host/code.h"
#include "host/host.h"
#include "runtime/runtime.h"
#include "sched/futex.h"

/* ---- the spec ---------------------------------------------------------------- */

shoal_pid_t shoal__host_pool_pid(const shoal_host_t *h, const char *name)
{
    for (size_t i = h->npools; i-- > 0;)
        if (!h->pools[i].draining && strcmp(h->pools[i].name, name) == 0)
            return h->pools[i].pid;
    return SHOAL_PID_NONE;
}

int shoal__host_pull_spec(const shoal_host_t *h, const shoal_config_pool_t *cp,
                          shoal_pool_spec_t *spec, shoal_code_t **code, char *why, size_t why_size)
{
    const shoal_config_pool_t *leaf = cp;
    while (leaf->nested != NULL)
        leaf = leaf->nested;
    if (cp->dead_letter != NULL &&
        (spec->dead_letter = shoal__host_pool_pid(h, cp->dead_letter)) == SHOAL_PID_NONE) {
        /* (the start order puts it first: config_pull.c) */
        snprintf(why, why_size, "its dead_letter pool %s is not running", cp->dead_letter);
        return SHOAL_EINVAL;
    }
    *code = shoal__code_new(leaf->module, leaf->args);
    if (*code != NULL && cp->src_module != NULL &&
        shoal__code_set_source(*code, cp->src_module, cp->src_args) != SHOAL_OK) {
        shoal__code_release(*code);
        *code = NULL;
    }
    if (*code == NULL) {
        snprintf(why, why_size, "out of memory");
        return SHOAL_ENOMEM;
    }
    if (cp->src_module != NULL)
        spec->source_args = shoal__code_source_args(*code);
    return SHOAL_OK;
}

/* ---- draining: dead-letter targets last ------------------------------------- */

bool shoal__host_pull_holds(const shoal_host_t *h, shoal_pid_t pid)
{
    if (h->ndead_letters == 0) /* the common case, and a reload that drops 15,000 pools */
        return false;
    for (size_t i = 0; i < h->npools; i++)
        if (h->pools[i].dead_letter == pid && h->pools[i].pid != pid &&
            !shoal__pool_is_ended(h->pools[i].rec))
            return true;
    return false;
}

void shoal__host_pull_release(shoal_host_t *h)
{
    for (size_t i = 0; i < h->npools; i++) {
        shoal_host_pool_t *hp = &h->pools[i];
        if (!hp->drain_held || shoal__host_pull_holds(h, hp->pid))
            continue;
        hp->drain_held = false;
        shoal_runtime_send_priority(h->rt, hp->pid, SHOAL_POOL_DRAIN, NULL, 0);
    }
}

int shoal__host_pull_drain_all(shoal_host_t *h, uint64_t end_ns, bool (*interrupted)(void *),
                               void *arg)
{
    for (size_t i = 0; i < h->npools; i++) {
        shoal_host_pool_t *hp = &h->pools[i];
        if (shoal__pool_is_ended(hp->rec))
            continue;
        if ((hp->drain_held = shoal__host_pull_holds(h, hp->pid)))
            continue;
        shoal_runtime_send_priority(h->rt, hp->pid, SHOAL_POOL_DRAIN, NULL, 0);
    }
    for (;;) { /* in slices: the held ones are told as their senders end */
        uint64_t slice = shoal__now_ns() + 10 * 1000000u;
        int busy = shoal__host_wait_ended(h->pools, h->npools, slice < end_ns ? slice : end_ns,
                                          interrupted, arg);
        if (busy <= 0 || shoal__now_ns() >= end_ns)
            return busy;
        shoal__host_pull_release(h);
    }
}

void shoal__host_pull_text(const shoal_config_pool_t *cp, char *buf, size_t size)
{
    buf[0] = '\0';
    if (cp->kind == SHOAL_POOL_KIND_PULL)
        snprintf(buf, size, ", pull: prefetch %u, buffer %u, redeliver %u%s%s%s%s", cp->prefetch,
                 cp->buffer, cp->redeliver, cp->dead_letter ? ", dead_letter " : "",
                 cp->dead_letter ? cp->dead_letter : "", cp->src_plugin ? ", source " : "",
                 cp->src_plugin ? cp->src_plugin : "");
}

void shoal__host_drain_one(shoal_host_t *h, shoal_host_pool_t *hp)
{
    hp->draining = true;
    hp->cp = NULL; /* its config goes with this generation */
    if ((hp->drain_held = shoal__host_pull_holds(h, hp->pid)))
        return; /* shoal__host_pull_release tells it */
    shoal_runtime_send_priority(h->rt, hp->pid, SHOAL_POOL_DRAIN, NULL, 0);
}

/* ---- reload -------------------------------------------------------------------- */

static bool str_same(const char *a, const char *b)
{
    return a == NULL || b == NULL ? a == b : strcmp(a, b) == 0;
}

static void source_name(const shoal_config_pool_t *p, char *buf, size_t size)
{
    if (p->src_plugin == NULL)
        snprintf(buf, size, "none");
    else
        snprintf(buf, size, "%s.%s", p->src_plugin, p->src_behaviour);
}

/* The same source: the same behaviour of the same module (a new .so at
 * the same path is a new one). Unresolved configs (both modules NULL)
 * compare the plugins' names. x and y get the names. */
static bool same_source(const shoal_config_pool_t *a, const shoal_config_pool_t *b, char x[160],
                        char y[160])
{
    source_name(a, x, 160);
    source_name(b, y, 160);
    return a->src_module == b->src_module && strcmp(x, y) == 0;
}

bool shoal__host_pull_replace(const shoal_config_pool_t *a, const shoal_config_pool_t *b, char *why,
                              size_t size)
{
    char x[160], y[160];
    if (a->kind != b->kind) {
        snprintf(why, size, "kind %s -> %s", shoal__pool_kind_name((uint32_t)a->kind),
                 shoal__pool_kind_name((uint32_t)b->kind));
        return true;
    }
    if (!same_source(a, b, x, y)) {
        snprintf(why, size, "source %s -> %s%s", x, y,
                 strcmp(x, y) == 0 ? " (a new plugin file)" : "");
        return true;
    }
    if (!shoal__node_equal(a->src_args, b->src_args)) {
        snprintf(why, size, "source_args changed");
        return true;
    }
    if (a->redeliver != b->redeliver) {
        snprintf(why, size, "redeliver %u -> %u", a->redeliver, b->redeliver);
        return true;
    }
    if (!str_same(a->dead_letter, b->dead_letter)) {
        snprintf(why, size, "dead_letter %s -> %s", a->dead_letter ? a->dead_letter : "none",
                 b->dead_letter ? b->dead_letter : "none");
        return true;
    }
    why[0] = '\0';
    return false;
}

/* ---- a replaced pull pool's epic ---------------------------------------------- */

bool shoal__host_pull_same_epic(const shoal_config_pool_t *a, const shoal_config_pool_t *b)
{
    char x[160], y[160];
    return a != NULL && b != NULL && a->kind == SHOAL_POOL_KIND_PULL &&
           b->kind == SHOAL_POOL_KIND_PULL && a->src_plugin != NULL && same_source(a, b, x, y) &&
           shoal__node_equal(a->src_args, b->src_args);
}

const char *shoal__host_pull_epic_plan(const shoal_host_pool_t *hp, const shoal_config_pool_t *cp)
{
    if (!shoal__host_pull_same_epic(hp->cp, cp) || hp->rec == NULL || hp->rec->pull == NULL)
        return "";
    shoal_pool_stats_t st;
    memset(&st, 0, sizeof st);
    shoal__host_peek(hp, &st);
    bool own = atomic_load_explicit(&hp->rec->pull->own_args, memory_order_relaxed) != 0;
    if (st.source_state == SHOAL_SOURCE_DONE)
        return ", its epic done (not run again)";
    if (st.source_state == SHOAL_SOURCE_RUNNING && own)
        return ", not taking its epic over (it runs with its own args: the config's starts "
               "from the start)";
    if (st.source_state == SHOAL_SOURCE_RUNNING || st.source_state == SHOAL_SOURCE_FAILED)
        return ", taking its epic over";
    return "";
}

bool shoal__host_pull_hand_over(shoal_host_t *h, const shoal_host_pool_t *old,
                                const shoal_host_pool_t *np, shoal_host_live_t *lv,
                                shoal_pull_handover_t *out, char *note, size_t size)
{
    note[0] = '\0';
    if (!shoal__host_pull_same_epic(old->cp, np->cp))
        return false;
    /* Its source's init has run (almost always by now: it started with
     * the pool), and did not fail -- else the old epic is not stopped for
     * it, and ends as its pool drains. (Asked every millisecond, within
     * the reload's deadline: a host-thread wait, as its calls are.) */
    const _Atomic uint32_t *up = &np->rec->pull->source_up;
    uint32_t u;
    while ((u = atomic_load_explicit(up, memory_order_relaxed)) == 0 &&
           shoal__now_ns() < lv->by_ns) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    if (u != 1) {
        snprintf(note, size,
                 "%s: its new source %s: the epic of the pool it replaces is not taken over, "
                 "and stops as that pool drains",
                 old->name,
                 u == 2 ? "did not start (its init failed)" : "had not run its init in time");
        shoal__host_log(h, SHOAL_LOG_WARN, "reload: %s", note);
        return false;
    }
    shoal_answer_t a;
    int rc =
        shoal__host_live_rc(lv, shoal_runtime_call_priority(h->rt, old->pid, SHOAL__POOL_HAND_OVER,
                                                            NULL, 0, shoal__host_live_ms(lv), &a));
    if (rc == SHOAL_OK) {
        rc = a.status != SHOAL_OK ? a.status : a.size != sizeof *out ? SHOAL_ENOTSUP : SHOAL_OK;
        if (rc == SHOAL_OK)
            memcpy(out, a.data, sizeof *out);
        shoal_answer_release(&a);
    }
    if (rc == SHOAL_OK)
        return true;
    /* Timed out, the call is still queued: the old pool stops its source
     * when its actor runs (or as it drains). */
    snprintf(note, size,
             "%s: the pool it replaces did not hand its epic over (%s%s): its source starts "
             "from the start, and what the old one sent may be handled again",
             old->name, shoal_strerror(rc),
             rc == SHOAL_ETIMEDOUT ? ": its actor did not run; every dispatcher thread busy?" : "");
    shoal__host_log(h, SHOAL_LOG_WARN, "reload: %s", note);
    return false;
}

/* What the pool runs with: its record's values once it reports a pull
 * pool's fields, else its config's (the last reload's or its start's). */
static void running(const shoal_host_pool_t *hp, uint32_t *prefetch, uint32_t *buffer)
{
    shoal_pool_stats_t st;
    memset(&st, 0, sizeof st);
    shoal__host_peek(hp, &st);
    bool reports = st.size_ >= offsetof(shoal_pool_stats_t, buffer) + sizeof st.buffer &&
                   st.kind == SHOAL_POOL_KIND_PULL && st.prefetch != 0;
    *prefetch = reports ? st.prefetch : hp->cp->prefetch;
    *buffer = reports ? (uint32_t)st.buffer : hp->cp->buffer;
}

/* A pull pool's command with a uint32_t payload, answered with one:
 * SHOAL_OK or why not (made as lv says: shoal_host_live_t). */
static int command(shoal_host_t *h, shoal_host_live_t *lv, shoal_pid_t pid, uint32_t type,
                   uint32_t v)
{
    if (lv->by_ns == 0)
        return SHOAL_OK;
    shoal_answer_t a;
    int rc =
        shoal_runtime_call_priority(h->rt, pid, type, &v, sizeof v, shoal__host_live_ms(lv), &a);
    if (rc != SHOAL_OK)
        return shoal__host_live_rc(lv, rc);
    rc = a.status != SHOAL_OK ? a.status : a.size != sizeof v ? SHOAL_ENOTSUP : SHOAL_OK;
    shoal_answer_release(&a);
    return rc;
}

void shoal__host_pull_live(shoal_host_t *h, const shoal_host_pool_t *hp,
                           const shoal_config_pool_t *cp, shoal_host_live_t *lv, char *buf,
                           size_t size)
{
    buf[0] = '\0';
    if (cp->kind != SHOAL_POOL_KIND_PULL || hp->cp == NULL || hp->cp->kind != cp->kind)
        return; /* a forward pool has neither; a new kind is a new pool */
    uint32_t run_prefetch, run_buffer;
    running(hp, &run_prefetch, &run_buffer);
    size_t n = 0;
    if (cp->prefetch != run_prefetch) {
        int r = command(h, lv, hp->pid, SHOAL_POOL_SET_PREFETCH, cp->prefetch);
        n += (size_t)snprintf(buf + n, size - n, "%s prefetch %u -> %u%s%s%s", hp->name,
                              run_prefetch, cp->prefetch, r != SHOAL_OK ? " (failed: " : "",
                              r != SHOAL_OK ? shoal_strerror(r) : "", r != SHOAL_OK ? ")" : "");
    }
    if (cp->buffer != run_buffer && n < size) {
        int r = command(h, lv, hp->pid, SHOAL_POOL_SET_BUFFER, cp->buffer);
        snprintf(buf + n, size - n, "%s%s buffer %u -> %u%s%s%s", n ? "; " : "", hp->name,
                 run_buffer, cp->buffer, r != SHOAL_OK ? " (failed: " : "",
                 r != SHOAL_OK ? shoal_strerror(r) : "", r != SHOAL_OK ? ")" : "");
    }
}
