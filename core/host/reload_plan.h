/* reload_plan.h - between reload.c (a reload, carried out) and
 * reload_plan.c (what it would change: each pool's verdict, and the words
 * of its change log). Not for other modules: they use host.h.
 */
#ifndef SHOAL_HOST_RELOAD_PLAN_H
#define SHOAL_HOST_RELOAD_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "host/host.h"

/* What a reload does to one pool of the new config: start a new one under
 * its name (none runs, its shape changed, a pull pool's kind, source,
 * source_args, redeliver or dead_letter changed: host_pull.c), or keep
 * the running one. why: the pull reason ("" for a new pool or shape). */
typedef struct shoal_reload_verdict_s {
    bool fresh;
    bool running;    /* a pool of its name runs (fresh: the new one replaces it) */
    bool swap, owed; /* a kept pool's workers are swapped for new code or args (a
                      * kept checkout pool has the same: checkout_replace);
                      * owed: its last swap may not have taken effect */
    char why[200];
} verdict_t;

/* What a reload changes, as one line's text: whole notes while they fit
 * (shoal__reload_note), then how many more there were
 * (shoal__reload_changes) -- a reload's line (2048 bytes in all: host_log.c)
 * keeps room for its ledger after them, a diff's answer for all of it
 * (control_cmd.c); a reload that removed 400 pools had its line cut in
 * the middle of a name, and its ledger with it. */
#define SHOAL_RELOAD_CHANGES_MAX 1500
typedef struct shoal_reload_change_log_s {
    char text[SHOAL_RELOAD_CHANGES_MAX + 64]; /* + "; and N more changes (not listed)" */
    size_t len;
    unsigned n, more;
} change_log_t;

/* Every pool's verdict for a reload to c, indexed as c->pools, worked out
 * before anything changes; NULL on ENOMEM (free() it). */
verdict_t *shoal__reload_judge_all(shoal_host_t *h, const shoal_config_t *c);

/* The running pool called name (not draining), or NULL. */
shoal_host_pool_t *shoal__reload_live_pool(shoal_host_t *h, const char *name);

/* "PLUGIN.BEHAVIOUR" of cp's leaf workers. */
void shoal__reload_leaf_name(const shoal_config_pool_t *cp, char *buf, size_t size);

/* Adds one note to l (or counts it, past SHOAL_RELOAD_CHANGES_MAX). */
void shoal__reload_note(change_log_t *l, const char *fmt, ...) SHOAL_PRINTF(2, 3);
/* The text of the changes noted: "no change", or the notes and how many
 * did not fit. */
const char *shoal__reload_changes(change_log_t *l);
/* Notes what a reload from was to c does to metrics.listen (done: said as
 * done, else as planned), and to the host's own settings that take effect
 * at once (shutdown.drain, log.format). */
void shoal__reload_metrics_note(change_log_t *log, const shoal_config_t *was,
                                const shoal_config_t *c, bool done);
void shoal__reload_host_note(change_log_t *log, const shoal_config_t *was, const shoal_config_t *c);

#endif
