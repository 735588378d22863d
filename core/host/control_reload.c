/* control_reload.c - the control socket while shoald starts or a reload
 * runs.
 *
 * WHILE SHOALD STARTS its pools (host.h: starting) the host thread waits
 * for each pool's first workers' init, as a reload does, and serves the
 * socket from that wait (shoald's `interrupted` for the start). Served:
 * status (a "starting generation 1 from PATH for T ms: STEP" line, and the
 * pools started so far), groups, inspect; reload waits, and runs once
 * the start has ended; stop gives the start up (as SIGTERM: every actor
 * started stops, and shoald exits). send, call, scale, epic and diff are
 * refused ("1 busy: shoald is starting ..."): a start that fails stops
 * every pool it started, and what they had accepted would be lost.
 *
 * WHILE A RELOAD RUNS. A reload runs on the host thread and may wait
 * there for seconds: for a new pool's first workers' init (up to 10 s, or a checkout pool's
 * member_start_timeout), for a swap's new workers, for a plugin's
 * constructors' trial or its init. The socket is not left unanswered
 * meanwhile: shoald serves it from inside those waits
 * (shoal__control_serve, called from the host's `interrupted` and the
 * loader's tend, each every SHOAL_ASK_EVERY_MS: 10 ms), through the code
 * its main loop uses. While a reload runs:
 *   - status, groups, inspect, send and call are served as ever. A pool
 *     the reload has started but not committed is reached by no name (send,
 *     call and inspect find the pool that serves); status lists it with
 *     " starting", and says "reloading generation N from PATH for T ms:
 *     STEP" after the generation, STEP what the reload waits for (host.h:
 *     step), e.g. "starting pool db (its first workers run init)". A name
 *     only the reload's config has (host.h: next, from when its file is
 *     read, its plugins not loaded yet) is answered "1 pool 'db' is not
 *     running yet: the reload to generation N starts it ...", as one only
 *     the starting config has is while shoald starts.
 *   - reload waits for the next reload: the file may have changed after
 *     the running one read it.
 *   - stop stops the reload as SIGTERM does (it fails, changing nothing:
 *     at once in a wait for workers, or as soon as a plugin being loaded
 *     is, no other loaded, reload.c; the plugins it loaded are released
 *     after the drain); then shoald drains. Answered as stopping from
 *     then on.
 *   - at most SHOAL_CONTROL_RELOADS_MAX requests wait for a reload: they
 *     have no deadline, and would otherwise take every slot.
 *   - scale, epic and diff are refused ("1 busy: a reload to generation N
 *     is running ...; try again when it ends"): the first two change what
 *     the reload may be changing, the third would plan against a host
 *     half reloaded.
 * A `reload` request never runs a reload itself: it waits (RELOAD) and the
 * main loop runs one (shoal__control_reload_wanted). So a reload never
 * runs inside the socket's own handling, which it serves from within.
 * All on the host thread.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "host/control_conn.h"
#include "sched/futex.h"

static void reload_begin(shoal_host_t *h, void *user)
{
    shoal_control_t *c = user;
    c->reloading = true;
    c->reload_since_ns = shoal__now_ns();
    c->reload_from = h->generation;
    c->reloads_begun++;
    c->reload_asked = false; /* this one reads the file after every ask so far */
}

/* Answers each `reload` that asked before this one began. */
static void reload_end(shoal_host_t *h, void *user, int rc, const char *why)
{
    shoal_control_t *c = user;
    c->reloading = false;
    for (size_t i = 0; i < c->nconns; i++) {
        shoal_control_conn_t *k = c->conns[i];
        if (k->fd < 0 || k->state != SHOAL_CONTROL_RELOAD || k->ticket >= c->reloads_begun)
            continue;
        if (rc == SHOAL_OK)
            shoal__control_say(k, "0 ok\ngeneration %" PRIu64 " (was %" PRIu64 ")\n", h->generation,
                               c->reload_from);
        else
            shoal__control_say(k, "1 reload failed: %s; generation %" PRIu64 " keeps running\n",
                               why != NULL && why[0] ? why : shoal_strerror(rc), h->generation);
        shoal__control_reply_ready(c, k);
    }
}

int shoal__control_reload_hook(shoal_control_t *c, shoal_host_t *h)
{
    return shoal__host_hook(
        h, &(shoal_host_hook_t){.begin = reload_begin, .end = reload_end, .user = c});
}

/* A reload is wanted; the first ask since the last one began takes its
 * place in the order requests came (the diffs asked before it run first:
 * control_diff.c). */
static void want_reload(shoal_control_t *c)
{
    if (!c->reload_asked)
        c->reload_asked_at = ++c->asked;
    c->reload_asked = true;
}

void shoal__control_hup(shoal_control_t *c)
{
    if (c != NULL)
        want_reload(c);
}

void shoal__control_reload_ask(shoal_control_t *c, shoal_control_conn_t *k)
{
    /* Waiting reloads have no deadline: a few leave the other slots (and
     * so status and stop) free, however many clients ask. */
    size_t waiting = 0;
    for (size_t i = 0; i < c->nconns; i++)
        waiting += c->conns[i]->fd >= 0 && c->conns[i]->state == SHOAL_CONTROL_RELOAD;
    if (waiting >= SHOAL_CONTROL_RELOADS_MAX) {
        shoal__control_say(k,
                           "1 busy: %d reload requests already wait for a reload; it will read "
                           "the file after yours came: its outcome is in `status`\n",
                           SHOAL_CONTROL_RELOADS_MAX);
        want_reload(c); /* as a SIGHUP: the file is read again */
        return;
    }
    k->state = SHOAL_CONTROL_RELOAD;
    k->ticket = c->reloads_begun;
    want_reload(c);
}

bool shoal__control_reload_wanted(const shoal_control_t *c)
{
    return c != NULL && c->reload_asked && !c->stopping && !shoal__control_diff_first(c);
}

bool shoal__control_busy_refuses(shoal_control_t *c, shoal_control_conn_t *k, const char *cmd)
{
    if (c->h->starting) {
        if (strcmp(cmd, "send") != 0 && strcmp(cmd, "call") != 0 && strcmp(cmd, "scale") != 0 &&
            strcmp(cmd, "epic") != 0 && strcmp(cmd, "diff") != 0)
            return false;
        shoal__control_say(k,
                           "1 busy: shoald is starting (for %" PRIu64
                           " ms): %s waits for it; try again when it ends (`status` says what "
                           "the start waits for)\n",
                           (shoal__now_ns() - c->h->starting_since_ns) / 1000000u, cmd);
        return true;
    }
    if (!c->reloading ||
        (strcmp(cmd, "scale") != 0 && strcmp(cmd, "epic") != 0 && strcmp(cmd, "diff") != 0))
        return false;
    shoal__control_say(k,
                       "1 busy: a reload to generation %" PRIu64 " is running (for %" PRIu64
                       " ms): %s waits for it; try again when it ends\n",
                       c->reload_from + 1, (shoal__now_ns() - c->reload_since_ns) / 1000000u, cmd);
    return true;
}

/* Whether list[0..n) has an entry called name. */
static bool declares(const shoal_config_pool_t *list, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i].name, name) == 0)
            return true;
    return false;
}

bool shoal__control_not_yet(shoal_control_t *c, shoal_control_conn_t *k, const char *name)
{
    shoal_host_t *h = c->h;
    if (c->stopping) /* what has not started never will */
        return false;
    uint64_t now = shoal__now_ns();
    if (h->starting) {
        const shoal_config_t *cf = h->config;
        bool pool = declares(cf->pools, cf->npools, name);
        if (!pool && !declares(cf->sources, cf->nsources, name))
            return false;
        shoal__control_say(k,
                           "1 %s '%s' is not running yet: shoald is starting (for %" PRIu64
                           " ms): %s; try again when the start ends\n",
                           pool ? "pool" : "source", name, (now - h->starting_since_ns) / 1000000u,
                           h->step);
        return true;
    }
    const shoal_config_t *next = h->next; /* read, perhaps not resolved yet */
    if (!c->reloading || next == NULL)
        return false;
    bool pool = declares(next->pools, next->npools, name);
    if (!pool && !declares(next->sources, next->nsources, name))
        return false;
    shoal__control_say(k,
                       "1 %s '%s' is not running yet: the reload to generation %" PRIu64
                       " starts it (for %" PRIu64 " ms): %s; it is reached once that reload "
                       "commits\n",
                       pool ? "pool" : "source", name, c->reload_from + 1,
                       (now - c->reload_since_ns) / 1000000u, h->step);
    return true;
}

void shoal__control_serve(shoal_control_t *c, bool *stop)
{
    if (c == NULL || c->h == NULL || !(c->reloading || c->h->starting || c->diffing) || c->serving)
        return;
    struct pollfd fds[SHOAL_CONTROL_POLLFDS];
    size_t n = shoal__control_pollfds(c, fds);
    if (n == 0)
        return;
    /* Nothing ready is no matter: the deadlines are kept all the same. */
    (void)poll(fds, n, 0);
    shoal__control_handle(c, fds, n, stop);
}
