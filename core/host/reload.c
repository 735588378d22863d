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
 * forgetting pools that have ended. See host.h. What each pool's verdict
 * is, and the change log's words, are reload_plan.c; a kept pool's live
 * changes reload_live.c; its new workers, when its code or args changed,
 * reload_swap.c.
 */
#include "host/host.h"
#include "host/name_index.h"
#include "host/reload_plan.h"
#include "host/source.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "pool/pool.h"
#include "pool/swap.h"
#include "runtime/runtime.h"

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
        const verdict_t *v = &verdicts[c->order[i]];
        if (v->fresh)
            shoal__reload_note(&log, "%s (%s)", cp->name,
                               v->running ? "a new pool to replace it" : "a new pool");
        else if (v->running && v->swap)
            shoal__reload_note(&log, "%s (new workers)", cp->name);
    }
    if (log.n != 0)
        shoal__host_log(h, SHOAL_LOG_INFO,
                        "reload: trying generation %" PRIu64 " from %s: starting beside the "
                        "running pools: %s; the running ones serve on until it commits",
                        gen, path, shoal__reload_changes(&log));
}

/* The pools a reload started, by name: an old pool asks whether one of
 * them replaces it (a scan of them for each old pool made a reload that
 * replaced 8,000 pools spend most of its 2.8 s in strcmp). */
static const char *host_pool_name_at(const void *arr, size_t i)
{
    return ((const shoal_host_pool_t *)arr)[i].name;
}

/* The reload failed after hooks[0..n) prepared: each of them aborts. */
static void hooks_abort(shoal_host_t *h, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (h->hooks[k].abort != NULL)
            h->hooks[k].abort(h->hooks[k].user);
}

/* *next gets the config read (NULL: none), which the caller frees when
 * the reload fails; once it is read, h->next names it. */
static int reload(shoal_host_t *h, const char *path, shoal_config_t **next, char *why,
                  size_t why_size)
{
    shoal_diag_t err = {0};
    char buf[1200];
    shoal_config_t *c = NULL;
    shoal__host_step(h, "reading the file, loading its plugins");
    int rc = shoal__config_load(path, &c, &err);
    *next = c;
    h->next = c;        /* its names: not running yet (control_reload.c), not unknown */
    if (rc == SHOAL_OK) /* a stop meanwhile: no more plugin loaded (each up to 10 s) */
        rc = shoal__config_resolve_until(c, h->loader, shoal__host_stop_came, h, &err);
    if (rc != SHOAL_OK) {
        fail_log(h, shoal__diag_format(&err, buf, sizeof buf), why, why_size);
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
            return rc;
        }
    }
    /* A stop that came while the file was read or its plugins loaded (a
     * plugin's init may take 10 s) fails the reload before anything
     * starts, as one during a start does. */
    if (shoal__host_stop_came(h)) {
        hooks_abort(h, prepared);
        fail_log(h, "interrupted by a stop before its pools started", why, why_size);
        return SHOAL_ESHUTDOWN;
    }
    uint64_t gen = h->generation + 1;
    size_t first_new = h->npools, first_src = h->nsources;
    /* Pools whose workers were swapped, prepared: committed below, or
     * aborted on a failure. */
    size_t *swapped = calloc(h->npools ? h->npools : 1, sizeof *swapped), nswapped = 0;
    uint64_t *tokens = calloc(h->npools ? h->npools : 1, sizeof *tokens); /* swapped[k]'s */
    verdict_t *verdicts = shoal__reload_judge_all(h, c); /* before anything starts */
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
        shoal__host_step(h, "starting pool %s (its first workers run init)", cp->name);
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
        shoal__host_step(h, "starting pool %s's new workers (they run init)", cp->name);
        if ((rc = shoal__host_swap_prepare(h, c, gen, hp, cp, &tokens[nswapped], what,
                                           sizeof what)) != SHOAL_OK) {
            shoal__diag_set(&err, cp->at->file, cp->at->line, cp->at->col,
                            "pools.%s: a new worker did not start: %s", cp->name, what);
            goto undo;
        }
        swapped[nswapped++] = i;
    }
    /* 3. New sources, and new ones for changed sources: their init runs. */
    shoal__host_step(h, "starting the new sources (they run init)");
    if ((rc = shoal__host_sources_prepare(h, c, gen, &first_src, &err)) != SHOAL_OK)
        goto undo;

    /* The new pools by name, and which of them replace a running one (a
     * "replaced" note says that; else "started"). */
    size_t nnew = h->npools - first_new;
    shoal_name_index_t fresh;
    size_t *old_of = malloc((nnew ? nnew : 1) * sizeof *old_of); /* the pool each replaces */
    if (shoal__name_index_build(&fresh, &h->pools[first_new], nnew, host_pool_name_at) !=
            SHOAL_OK ||
        old_of == NULL) {
        free(old_of);
        shoal__name_index_free(&fresh);
        rc = SHOAL_ENOMEM;
        shoal__diag_set(&err, path, 0, 0, "out of memory");
        goto undo;
    }

    /* Committed: nothing below can make the reload fail. New and replacing
     * pools take their names first, before any wait: a sender that looks a
     * replaced pool up by name finds the one that serves from now on, never
     * the old one, told to drain below (it refuses). Then the swaps'
     * COMMITs and the live changes' calls, which share one deadline
     * (shoal_host_live_t): with every dispatcher thread stuck, each would
     * wait its own. */
    shoal__host_step(h, "committing: the new pools go to work, the old ones drain");
    for (size_t j = first_new; j < h->npools; j++)
        shoal_runtime_register(h->rt, h->pools[j].name, h->pools[j].pid);
    change_log_t log = {.len = 0, .n = 0};
    shoal_host_live_t lv = {.by_ns = shoal__deadline_ns(shoal__now_ns(), SHOAL_HOST_LIVE_MS)};
    for (size_t j = 0; j < nnew; j++)
        old_of[j] = SIZE_MAX;
    for (size_t i = 0; i < first_new; i++) {
        size_t j = h->pools[i].draining
                       ? SIZE_MAX
                       : shoal__name_index_find(&fresh, &h->pools[first_new], host_pool_name_at,
                                                h->pools[i].name);
        if (j != SIZE_MAX)
            old_of[j] = i;
    }
    /* They were started held: they work from now on -- before the pools
     * they replace are told to drain, so that a group's takers always find
     * an open pool of it. A pull pool replacing one that runs the same
     * source takes its epic over (its source stops first). */
    for (size_t j = first_new; j < h->npools; j++) {
        shoal_host_pool_t *np = &h->pools[j];
        shoal_pull_handover_t epic;
        char unhanded[400];
        size_t i = old_of[j - first_new];
        bool handed = i != SIZE_MAX && shoal__host_pull_hand_over(h, &h->pools[i], np, &lv, &epic,
                                                                  unhanded, sizeof unhanded);
        if (i != SIZE_MAX && !handed && unhanded[0] != '\0')
            shoal__reload_note(&log, "%s", unhanded);
        shoal__host_go_with(h, np, &lv, handed ? &epic : NULL);
    }
    for (size_t k = 0; k < nswapped; k++) {
        shoal_host_pool_t *hp = &h->pools[swapped[k]];
        const shoal_config_pool_t *cp = shoal__config_pool(c, hp->name);
        uint32_t n = 0;
        int r = shoal__host_live_rc(&lv,
                                    shoal__pool_swap_step(h->rt, hp->pid, SHOAL__POOL_SWAP_COMMIT,
                                                          tokens[k], shoal__host_live_ms(&lv), &n));
        char leaf[160];
        shoal__reload_leaf_name(cp, leaf, sizeof leaf);
        /* Until the pool says otherwise, it may run its old code: the next
         * reload swaps it again (swap_owed). */
        hp->swap_token = r == SHOAL_OK ? 0 : tokens[k];
        if (r == SHOAL_ETIMEDOUT) { /* still queued: the pool's actor carries it out */
            shoal__reload_note(&log, "%s: workers replaced when its actor runs (%s)", hp->name,
                               leaf);
            shoal__host_log(h, SHOAL_LOG_WARN,
                            "reload: pool %s: the swap of its workers was not answered within %d "
                            "ms (its actor did not run: every dispatcher thread busy?); it is "
                            "still queued and takes effect when the actor runs",
                            hp->name, SHOAL_HOST_LIVE_MS);
        } else if (r != SHOAL_OK) { /* its new workers are stopped; the old ones serve on */
            shoal__pool_swap_step(h->rt, hp->pid, SHOAL__POOL_SWAP_ABORT, tokens[k],
                                  shoal__host_live_ms(&lv), NULL);
            shoal__reload_note(
                &log,
                "%s: swap failed at its commit (%s): the old workers serve on; the next reload "
                "tries it again",
                hp->name, shoal_strerror(r));
        } else
            shoal__reload_note(&log, "%s: %u workers replaced (%s)", hp->name, n, leaf);
    }
    for (size_t i = 0; i < first_new; i++) {
        shoal_host_pool_t *hp = &h->pools[i];
        if (hp->draining)
            continue;
        const shoal_config_pool_t *cp = shoal__config_pool(c, hp->name);
        size_t j =
            shoal__name_index_find(&fresh, &h->pools[first_new], host_pool_name_at, hp->name);
        if (cp == NULL || j != SIZE_MAX) {
            const char *reason = cp != NULL ? verdicts[cp - c->pools].why : "";
            if (cp == NULL)
                shoal__names_unregister_pid(h->rt, hp->name, hp->pid);
            shoal__reload_note(&log, "%s %s%s%s%s", cp == NULL ? "removed" : "replaced", hp->name,
                               reason[0] ? " (" : "", reason, reason[0] ? ")" : "");
            hp->ended_gen = gen;
            shoal__host_drain_one(h, hp);
            continue;
        }
        char live[1200]; /* what runs now (a scale may have changed the size since) */
        unsigned unanswered = lv.unanswered;
        shoal__host_live(h, hp, cp, &lv, live, sizeof live);
        if (live[0] != '\0')
            shoal__reload_note(&log, "%s", live);
        if (lv.unanswered != unanswered)
            shoal__host_log(h, SHOAL_LOG_WARN,
                            "reload: pool %s: a live change was not answered within %d ms (its "
                            "actor did not run: every dispatcher thread busy?); it is still queued "
                            "and takes effect when the actor runs: %s",
                            hp->name, SHOAL_HOST_LIVE_MS, live);
        hp->cp = cp; /* the new generation's entry from now on */
    }
    /* One that replaces a pool was said above; one of the name of a pool
     * that an earlier reload removed, still draining or ended, is no
     * matter. */
    for (size_t j = 0; j < nnew; j++)
        if (old_of[j] == SIZE_MAX)
            shoal__reload_note(&log, "started %s", h->pools[first_new + j].name);
    free(old_of);
    shoal__name_index_free(&fresh);
    char notes[600];
    shoal__host_sources_commit(h, c, gen, first_src, notes, sizeof notes);
    if (notes[0] != '\0')
        shoal__reload_note(&log, "%s", notes);
    /* The runtime's settings and the control socket are fixed at start. */
    const shoal_config_t *was = h->config;
    shoal__reload_metrics_note(&log, was, c, true);
    shoal__reload_host_note(&log, was, c);
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
        shoal__reload_note(&log, "runtime: and log.level: changes take effect at the next start");
    /* Nothing refers to the old config any more: the pools' code and args
     * are held by the pools themselves (code.h). It is freed once the new
     * one is the host's: freeing it may release a plugin whose fini takes
     * up to 10 s, during which the control socket is served (loader.h:
     * tend) -- as generation gen, its pools reached by their names. */
    shoal_config_t *old = h->config;
    h->config = c;
    *next = NULL; /* the host's now */
    h->generation = gen;
    h->reloads++;
    shoal__host_set_generation(h, gen, c->log.format);
    shoal__host_step(h, "committed: releasing the plugins no longer used");
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
                    shoal__reload_changes(&log), ledger);
    return SHOAL_OK;
undo:
    shoal__host_step(h, "undoing what it started");
    hooks_abort(h, prepared);
    /* The swaps' ABORTs share one deadline, as the COMMITs do: with every
     * dispatcher thread stuck, each would wait its own. One not answered
     * is still queued, and carried out when the pool's actor runs. */
    shoal_host_live_t undo_lv = {.by_ns = shoal__deadline_ns(shoal__now_ns(), SHOAL_HOST_LIVE_MS)};
    for (size_t k = 0; k < nswapped; k++)
        shoal__pool_swap_step(h->rt, h->pools[swapped[k]].pid, SHOAL__POOL_SWAP_ABORT, tokens[k],
                              shoal__host_live_ms(&undo_lv), NULL);
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
    return rc;
}

int shoal__host_reload(shoal_host_t *h, const char *path, char *why, size_t why_size)
{
    char text[1200] = "";
    for (size_t k = 0; k < h->nhooks; k++)
        if (h->hooks[k].begin != NULL)
            h->hooks[k].begin(h, h->hooks[k].user);
    shoal_config_t *next = NULL;
    int rc = reload(h, path, &next, text, sizeof text);
    h->next = NULL; /* before it is freed: a fini there serves the socket */
    /* A failed reload's: the plugins only it loaded are released (each
     * fini up to 10 s) -- after the drain when a stop failed it. */
    if (next != NULL && shoal__host_stop_came(h))
        shoal__host_keep_until_end(h, next);
    else
        shoal__config_free(next);
    h->step[0] = '\0';
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
    /* Quiet: its actor and every worker have ended; its counts are final
     * and move into the ledger. */
    shoal__host_forget_quiet(h);
}
