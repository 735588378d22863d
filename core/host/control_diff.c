/* control_diff.c - `diff [FILE]`: what a reload from FILE (or from the
 * host's own config file) would change, without changing anything.
 *
 * A diff loads the plugins FILE names that the host has not loaded yet
 * (their constructors' trial, their init: up to 10 s each, loader.h), so
 * it is not done inside the socket's handling: the request waits (DIFF,
 * no deadline) and shoald's main loop runs it (shoal__control_diff_run),
 * one at a time in the order they came (a reload asked meanwhile, or a
 * SIGHUP, runs after the diffs asked before it and before those asked
 * after it), at most SHOAL_CONTROL_DIFFS_MAX waiting beside the one
 * running. It is answered before the plugins only it loaded are released
 * (their fini, up to 10 s each). While one runs, the socket is served
 * from the loader's tend, as during a reload (control_reload.c): status
 * says "diffing FILE for T ms: ..."; another diff waits its turn; a
 * reload waits; stop is answered at once, the diffs and reloads waiting
 * are told they were not done.
 *
 * A stop (`shoalctl stop`, SIGTERM, SIGINT: the host's `interrupted`)
 * ends the running diff at its next plugin: the plugin loading now is
 * not cut short (its trial or init, up to 10 s), but no other is loaded,
 * the client is told the diff was not done, and the plugins it loaded
 * are released only after the drain (shoal__host_keep_until_end), so
 * that their fini does not hold it off. One diff runs per turn of the
 * main loop, which reads the signals between two, and runs no reload in
 * a turn whose diff a stop ended. Before, a diff naming a plugin whose
 * init hung held the host thread -- every other client, signals, the
 * table -- for the 10 s of the loader's deadline. All on the host thread.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "host/config.h"
#include "host/control_conn.h"
#include "sched/futex.h"

void shoal__control_diff_ask(shoal_control_t *c, shoal_control_conn_t *k, const char *path)
{
    size_t waiting = 0; /* the one running is not (its path is taken) */
    for (size_t i = 0; i < c->nconns; i++)
        waiting += c->conns[i]->fd >= 0 && c->conns[i]->state == SHOAL_CONTROL_DIFF &&
                   c->conns[i]->diff_path != NULL;
    if (waiting >= SHOAL_CONTROL_DIFFS_MAX) {
        shoal__control_say(k,
                           "1 busy: %d diff requests already wait (a diff may load plugins, "
                           "up to 10 s each); try again when they are done\n",
                           SHOAL_CONTROL_DIFFS_MAX);
        return;
    }
    if ((k->diff_path = strdup(path != NULL ? path : c->config)) == NULL) {
        shoal__control_say(k, "1 out of memory\n");
        return;
    }
    k->state = SHOAL_CONTROL_DIFF;
    k->ticket = ++c->asked;
}

/* The first connection whose diff waits (oldest first: tickets grow), or
 * the one with ticket t (0: any). */
static shoal_control_conn_t *waiting_diff(const shoal_control_t *c, uint64_t t)
{
    shoal_control_conn_t *first = NULL;
    for (size_t i = 0; i < c->nconns; i++) {
        shoal_control_conn_t *k = c->conns[i];
        if (k->fd < 0 || k->state != SHOAL_CONTROL_DIFF)
            continue;
        if (t != 0 && k->ticket == t)
            return k;
        if (t == 0 && (first == NULL || k->ticket < first->ticket))
            first = k;
    }
    return first;
}

bool shoal__control_diffing(const shoal_control_t *c) { return c != NULL && c->diffing; }

bool shoal__control_diff_wanted(shoal_control_t *c)
{
    return c != NULL && c->h != NULL && !c->stopping && !c->diffing && waiting_diff(c, 0) != NULL;
}

/* Runs k's diff (the first waiting) and answers it, if k is still there
 * when it ends. */
static void run_one(shoal_control_t *c, shoal_control_conn_t *k)
{
    /* k may be closed and freed while the diff runs (the socket is served
     * from within it): found again by its ticket after. */
    uint64_t ticket = k->ticket;
    char *path = k->diff_path;
    k->diff_path = NULL;
    c->diffing = true;
    c->diff_since_ns = shoal__now_ns();
    c->diff_running = path;
    c->diff_step = "reading it, loading its plugins";
    shoal_config_t *cfg = NULL;
    shoal_diag_t err = {0};
    char buf[1700]; /* the changes, at most 1500 bytes and how many more (reload.c) */
    /* A regular file only, never blocking, and read once: settling waits
     * up to 2 s, and any client may name a file that never settles
     * (file.h). */
    int rc = shoal__config_load_once(path, &cfg, &err);
    /* serves the socket (the loader's tend; the host's `interrupted`: a
     * `shoalctl stop`, a SIGTERM or SIGINT pending) */
    if (rc == SHOAL_OK)
        rc = shoal__config_resolve_until(cfg, c->h->loader, shoal__host_stop_came, c->h, &err);
    if ((k = waiting_diff(c, ticket)) != NULL) {
        if (rc == SHOAL_ESHUTDOWN)
            shoal__control_say(k, "1 shoald is stopping: the diff asked was not done (%s)\n",
                               shoal__diag_format(&err, buf, sizeof buf));
        else if (rc != SHOAL_OK)
            shoal__control_say(k, "1 %s\n", shoal__diag_format(&err, buf, sizeof buf));
        else {
            shoal__host_plan(c->h, cfg, buf, sizeof buf);
            shoal__control_say(k, "0 ok\ngeneration %" PRIu64 " -> %" PRIu64 ": %s\n",
                               c->h->generation, c->h->generation + 1, buf);
        }
        shoal__control_reply_ready(c, k);
    }
    /* Answered first: the plugins only this diff loaded are released now,
     * each fini waited for (up to 10 s), the socket still served -- or,
     * when a stop came, after the drain. */
    c->diff_step = "answered; releasing the plugins it loaded";
    if (rc == SHOAL_ESHUTDOWN || shoal__host_stop_came(c->h))
        shoal__host_keep_until_end(c->h, cfg);
    else
        shoal__config_free(cfg);
    c->diffing = false;
    c->diff_running = NULL;
    free(path);
}

bool shoal__control_diff_first(const shoal_control_t *c)
{
    const shoal_control_conn_t *k = waiting_diff(c, 0);
    return k != NULL && c->reload_asked && k->ticket < c->reload_asked_at;
}

void shoal__control_diff_run(shoal_control_t *c)
{
    /* One, the first asked: the main loop reads the signals and runs a
     * reload between two. A reload asked is run before the diffs asked
     * after it (shoal__control_reload_wanted), so a stream of diffs never
     * holds it off. */
    if (shoal__control_diff_wanted(c) && (!c->reload_asked || shoal__control_diff_first(c)))
        run_one(c, waiting_diff(c, 0));
}
