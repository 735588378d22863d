/* host.h - what shoald runs: a runtime built from a config, its pools
 * started and registered under their names, log lines in the config's
 * format, and the drain at the end.
 *
 * Every log line carries the config generation (1 for the file shoald
 * started with).
 */
#ifndef SHOAL_HOST_HOST_H
#define SHOAL_HOST_HOST_H

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include "host/config.h"
#include "pool/pool.h"

/* A pool the host started, until it has ended and been forgotten. */
typedef struct shoal_host_pool_s {
    char *name;
    shoal_pid_t pid;
    shoal_pool_t *rec;             /* a reference on its record: read without asking it */
    uint64_t gen;                  /* the generation that started it (its ledger's) */
    const shoal_config_pool_t *cp; /* its entry in the current config; NULL once draining */
    shoal_pool_stats_t last;       /* for rates in the table */
    double unread_s;               /* seconds since `last` the table could not read it */
    bool draining;                 /* removed or replaced: draining, then forgotten */
    uint64_t ended_gen;            /* the generation whose reload removed or replaced it */
    bool over_warn;                /* in flight past its warn_queue (logged once) */
    /* a source's (source.h): its sends at the last table row; restarts and
     * state at the last watch */
    uint64_t last_sent, last_refused, seen_restarts;
    bool down;
    /* a pull pool's dead_letter as its spec has it (SHOAL_PID_NONE: none);
     * a pool some pool still running sends dead letters to is told to
     * drain only once they have ended (drain_held until then: host_pull.c) */
    shoal_pid_t dead_letter;
    bool drain_held;
    /* the token of its last worker swap whose COMMIT failed or was not
     * answered (reload.c); until its record's swap_done names it, the pool
     * may run other code than cp names, and a reload swaps it again.
     * 0: none. */
    uint64_t swap_token;
    /* started held by a reload that committed, and not yet told so: its
     * SHOAL__POOL_GO could not be sent (shoal__host_go); shoal__host_tidy
     * sends it again */
    bool go_owed;
    /* the epic that GO carries (a pull pool's, handed over by the pool it
     * replaces: host_pull.c) while it is owed; NULL: none */
    shoal_pull_handover_t *owed_epic;
} shoal_host_pool_t;

/* The message counts of a set of pools (a ledger): accepted = handled +
 * failed + dropped + in flight; refused beside. */
typedef struct shoal_host_counts_s {
    uint64_t gen;
    uint64_t accepted, handled, failed, dropped, refused;
    uint64_t dead_lettered; /* pull pools: passed on to their dead_letter pool */
} shoal_host_counts_t;

struct shoal_host_s;

/* Something outside the host that follows its reloads (SIGHUP or shoalctl
 * reload), as shoald's /metrics address and systemd's notify protocol do.
 * Each callback may be NULL; all run on the host thread, in this order:
 * begin; prepare, with the next config loaded and resolved (it may refuse
 * the reload: err says why, at its file:line:col, and nothing has
 * changed); then commit (the reload is done) or abort (it failed after a
 * prepare that succeeded); end, with the result (rc) and, on failure, its
 * text (why, "" on success). */
typedef struct shoal_host_hook_s {
    void (*begin)(struct shoal_host_s *h, void *user);
    int (*prepare)(void *user, const shoal_config_t *next, shoal_diag_t *err);
    void (*commit)(void *user);
    void (*abort)(void *user);
    void (*end)(struct shoal_host_s *h, void *user, int rc, const char *why);
    void *user;
} shoal_host_hook_t;

#define SHOAL_HOST_HOOKS_MAX 4

typedef struct shoal_host_s {
    shoal_runtime_t *rt;
    shoal_loader_t *loader;
    shoal_config_t *config; /* the current generation's */
    /* The config a running reload brings, from when its file is read until
     * the reload ends (reload.c); NULL otherwise. Its pools and sources are
     * "not running yet" meanwhile (control_reload.c). Host thread. */
    const shoal_config_t *next;
    /* Configs whose plugins are released only when the host is destroyed,
     * after the drain (shoal__host_keep_until_end): a diff a stop came
     * during, whose plugins' fini (up to 10 s each) would have held the
     * drain off. */
    shoal_config_t **kept;
    size_t nkept;
    uint64_t generation;
    uint64_t reloads, reloads_failed;
    shoal_host_pool_t *pools;
    size_t npools, pools_cap;
    size_t ndead_letters; /* pools[] entries with a dead_letter: none, none held */
    /* sources (source.h): singleton actors, each in a record of one worker */
    shoal_host_pool_t *sources;
    size_t nsources, sources_cap;
    uint64_t started_ns; /* shoal__now_ns() at start, for the table's uptime */
    /* Log lines written so far (any thread, relaxed), and the table's own
     * (host thread): on a terminal a block is redrawn over the previous
     * one only when no log line came between them (table.c). */
    _Atomic uint64_t log_lines;
    uint64_t table_log_seen;
    size_t table_lines;
    /* The final counts of pools that have ended and been forgotten, one
     * entry per generation that started any (oldest first): with the live
     * pools' they make the ledger, which so never forgets a message. */
    shoal_host_counts_t *gone;
    size_t ngone, gone_cap;
    /* log sink: stderr, text or JSON lines; generation and format are read
     * by every thread that logs, and written under log_lock */
    FILE *log_out;
    int log_format;
    uint64_t log_gen;
    char log_tag[80]; /* an isolated pool's child: "NAME:PID", on each line */
    pthread_mutex_t log_lock;
    int rt_log_level; /* fixed at start, as the runtime's */
    char *stall_text; /* shoal__host_stall_lines */
    size_t stall_cap;
    shoal_host_hook_t hooks[SHOAL_HOST_HOOKS_MAX]; /* shoal__host_hook: shoald's */
    size_t nhooks;
    bool control_fixed; /* shoald --control: a reload ignores runtime.control */
    bool stuck;         /* a failed start left handlers in plugin code (host_start_ex) */
    /* Whether a stop (SIGTERM, SIGINT) came, asked while pools and
     * sources wait for their first workers' init -- which then stops
     * waiting (the start, or the reload, fails; nothing changed) and may
     * wait as long as a checkout pool's member_start_timeout. While
     * shoal__host_start_ex runs, its `interrupted`; after it, what shoald
     * sets for its reloads. NULL: never, and the wait is
     * SHOAL_HOST_START_TIMEOUT_MS. */
    bool (*interrupted)(void *arg);
    void *interrupted_arg;
    /* What shoald's start (host.c) or a running reload (reload.c) does
     * now, e.g. "starting pool db (its first workers run init)"; "" when
     * neither runs: `shoalctl status` says it while either waits
     * (control_reload.c). shoal__host_step sets it. */
    char step[192];
    /* From shoal__host_create until shoal__host_start_pools has started
     * every pool and source (then h->started_ns is set), since
     * starting_since_ns. */
    bool starting;
    uint64_t starting_since_ns;
} shoal_host_t;

/* Whether a stop came: h's `interrupted` (NULL: never) says so. Takes h as
 * a void * to serve as a stop predicate (shoal__config_resolve_until). */
bool shoal__host_stop_came(void *h);

/* Takes c, to be freed by shoal__host_destroy, after the host's own
 * plugins' release; freed now if it cannot be kept (out of memory). */
void shoal__host_keep_until_end(shoal_host_t *h, shoal_config_t *c);

/* Adds hook to those h's reloads call (host thread). SHOAL_ELIMIT past
 * SHOAL_HOST_HOOKS_MAX. shoal__host_unhook removes the one with that user. */
int shoal__host_hook(shoal_host_t *h, const shoal_host_hook_t *hook);
void shoal__host_unhook(shoal_host_t *h, const void *user);

/* Builds the runtime from c (taking c, resolved against loader), spawns
 * every pool and registers it under its name. On error nothing is left
 * running, c is freed, and err says why. */
int shoal__host_start(shoal_config_t *c, shoal_loader_t *loader, FILE *log_out, shoal_host_t **out,
                      shoal_diag_t *err);
/* shoald's start in two steps, so that the control socket is served
 * while the pools start (control.h: WHILE SHOALD STARTS).
 * shoal__host_create builds the runtime from c (taking c: freed on error,
 * *out NULL); no pool runs yet, h->starting is set.
 * shoal__host_start_pools then starts every pool and source as
 * shoal__host_start_ex does, saying what it waits for in h->step, and
 * clears h->starting. On error (err says why) every actor it started is
 * stopped and waited for as below; h->stuck set means a handler is still
 * in plugin code and h must not be destroyed; else the caller destroys h. */
int shoal__host_create(shoal_config_t *c, shoal_loader_t *loader, FILE *log_out, shoal_host_t **out,
                       shoal_diag_t *err);
int shoal__host_start_pools(shoal_host_t *h, bool (*interrupted)(void *), void *arg,
                            shoal_diag_t *err);
/* Sets h->step (host thread). */
void shoal__host_step(shoal_host_t *h, const char *fmt, ...) SHOAL_PRINTF(2, 3);
/* shoald's start in one step: as shoal__host_start, and `interrupted` (a
 * SIGTERM) is asked every SHOAL_ASK_EVERY_MS while a pool's first workers
 * run init -- true stops the start (SHOAL_ESHUTDOWN). After a failed or
 * stopped start, handlers still in plugin code (an init that hangs) are
 * waited for up to shutdown.drain (or until `interrupted` says true again:
 * a second signal); past it each is logged ("start: still in its handler
 * after ...") and *out is the host, left running with h->stuck set: the
 * caller ends the process without destroying it (its threads cannot be
 * joined). */
int shoal__host_start_ex(shoal_config_t *c, shoal_loader_t *loader, FILE *log_out,
                         bool (*interrupted)(void *), void *arg, shoal_host_t **out,
                         shoal_diag_t *err);

/* Reloads from path (SIGHUP), all or nothing: parse, validate and resolve
 * the whole file; start every new pool and every replaced one (a changed
 * shape or bounds) and wait until each of their workers has run init;
 * start the new workers of every pool whose code or args changed beside
 * the old ones and wait for their init (shoal__pool_swap_*). Any failure
 * up to there stops what was started and changes nothing else: it is
 * logged with its location (the init's own message when an init failed),
 * counted, and returned in why. Then: the swaps are committed, sizes and
 * mailbox limits applied live, removed pools unregistered and drained,
 * replaced ones drained. One log line says what changed. Returns SHOAL_OK
 * or the failure; why (may be NULL) gets the failure's text. Every hook
 * (shoal__host_hook) is called along the way, as shoal_host_hook_t says. */
int shoal__host_reload(shoal_host_t *h, const char *path, char *why, size_t why_size);

/* The ledger over every pool the host started (running, draining, or
 * ended and forgotten), in one line: accepted = handled + failed + dropped
 * + in flight, and how many were refused. Read from the pools' records,
 * never waiting on a pool. In the reload log line and shoalctl status. */
void shoal__host_ledger(shoal_host_t *h, char *buf, size_t size);
/* The same, one line per generation that started pools ("ledger gen 3:
 * ..."), the newest SHOAL_HOST_LEDGER_GENS of them -- the ones before
 * summed in one line first ("ledger gens 1..180: ...")
 * --, then the total ("ledger total: ..."), each ending in a newline:
 * at most SHOAL_HOST_LEDGERS_MAX bytes in all, however many reloads. */
#define SHOAL_HOST_LEDGER_GENS 16
#define SHOAL_HOST_LEDGERS_MAX ((SHOAL_HOST_LEDGER_GENS + 2) * 320)
void shoal__host_ledgers(shoal_host_t *h, char *buf, size_t size);

/* What a reload to c (loaded and resolved) would change, without changing
 * anything: one line (shoald --check --diff). */
void shoal__host_plan(shoal_host_t *h, const shoal_config_t *c, char *buf, size_t size);

/* Whether hp (a pool or a source) belongs to the running generation:
 * false while the reload that started it has not committed (it waits for
 * its workers' init, held: reload.c), during which the control socket
 * reaches it by no name (control_reload.c). */
static inline bool shoal__host_committed(const shoal_host_t *h, const shoal_host_pool_t *hp)
{
    return hp->gen <= h->generation;
}

/* Forgets pools that have finished draining and whose every worker has
 * ended, keeping their final counts in the ledger. Called once a second by
 * shoald. */
void shoal__host_tidy(shoal_host_t *h);

/* Logs a pool whose messages in flight pass its warn_queue, once per
 * crossing: once above it, once when back at 9/10 of it or below. Called
 * once a second by shoald; never waits for an isolated pool's counts (an
 * unread pool is looked at the next second). */
void shoal__host_watch(shoal_host_t *h);

/* Stops every source first (source.h: producers before the pools they
 * feed), then asks every pool to drain (a pool a pull pool sends dead
 * letters to once that one has ended) and waits until all have ended or
 * deadline_ms passed; logs each pool still busy then, with its last counts (or says
 * they are unknown). Between polls (every 10 ms, and before each pool's
 * stats call) asks interrupted(arg) (NULL: never): when it says true, stops
 * waiting at once and returns -1. Else returns how many pools were busy. */
int shoal__host_drain(shoal_host_t *h, uint64_t deadline_ms, bool (*interrupted)(void *),
                      void *arg);

/* After a drain that left pools busy: logs each handler still stuck (pool,
 * behaviour, actor, elapsed) and the final ledger, in which every message
 * not settled (queued, or in a handler that did not return) counts as
 * dropped. The runtime is left running: the caller exits without
 * destroying it (a thread inside plugin code cannot be stopped). */
void shoal__host_report_lost(shoal_host_t *h);
/* Logs each handler still stuck in plugin code: "<A.G> NAME: WHEN: still
 * in its handler after S s (where)TAIL"; returns how many. */
size_t shoal__host_log_stuck(shoal_host_t *h, const char *when, const char *tail);
/* Waits, polling every 10 ms, until no handler is in plugin code, wait_ms
 * pass, or interrupted(arg) (NULL: never) says true; then logs each one
 * still there as shoal__host_log_stuck(h, when, ": not waited for") and
 * returns how many (0: the runtime's threads can be joined). */
size_t shoal__host_wait_stuck(shoal_host_t *h, uint64_t wait_ms, bool (*interrupted)(void *),
                              void *arg, const char *when);

/* The handlers stalled past runtime.stall_warn, one status line each:
 * "stalled <3.1> api/echo for 1234 ms (pool api, behaviour echo, thread 1)",
 * at most 16 and then "stalled: N more"; then "compensating threads N (...)"
 * while any runs; "" when none. The text lives in h until the next call
 * (the host thread only). */
const char *shoal__host_stall_lines(shoal_host_t *h);

/* Stops what is left, joins every thread, frees everything. */
void shoal__host_destroy(shoal_host_t *h);

/* A log line from the host itself (pid none). */
void shoal__host_log(shoal_host_t *h, int level, const char *fmt, ...) SHOAL_PRINTF(3, 4);

/* What the log's output (host/output.h) dropped while its reader did not
 * read, said once it reads again: a warn line "log: N lines dropped while
 * stderr was not read" when the count moved past *said and nothing is held
 * any more (*said then takes the count). Called about once a second by
 * the thread that runs the host (shoald's, an isolated child's). */
struct shoal_output_s;
void shoal__host_log_drops(shoal_host_t *h, struct shoal_output_s *log, uint64_t *said);

/* The table (table.c), every second: a top line (generation, uptime,
 * pools, sources, threads), the pools' header and a row per pool (rates
 * per second since the previous call over `seconds`, totals, queue-wait
 * p50/p99 in microseconds, state: running, degraded, draining, ended, or
 * `no answer` when an isolated pool's counts could not be read at once),
 * then the sources' header and rows (source.h). tty: redrawn in place over
 * the previous block (ANSI cursor up and clear to the end of the screen),
 * unless a log line was written since it (then below it: a log line on the
 * same terminal is never wiped); else plain blocks, each ending in an
 * empty line. */
void shoal__host_table(shoal_host_t *h, FILE *out, double seconds, bool tty);

/* ---- between host.c (and host_log.c) and reload.c ---- */

/* Sets the generation and the log format that every line from now on
 * carries (under log_lock: log lines come from every thread) and that a
 * crash report names (runtime/fault.h). Host thread. */
void shoal__host_set_generation(shoal_host_t *h, uint64_t generation, int log_format);

/* How long a pool's first workers (or a swap's new ones) may take to run
 * init before the start counts as failed. */
#define SHOAL_HOST_START_TIMEOUT_MS 10000u

/* How long a reload's live changes (a kept pool's size, bounds, mailbox,
 * ...: reload_live.c) wait for the pools' actors to answer, all of them
 * together. */
#define SHOAL_HOST_LIVE_MS 5000

/* Spawns the pool cp describes (its nested chain, its code held by every
 * worker) and waits until every level has started. why: the failure. */
int shoal__host_start_pool(shoal_host_t *h, const shoal_config_t *c, const shoal_config_pool_t *cp,
                           uint64_t gen, const shoal_pool_opts_t *opts, shoal_pid_t *pid, char *why,
                           size_t why_size);
/* The spec and launch of a pool with `isolation: process` (its parent's
 * side): specs[0] a pool of cp's size, mailbox and restart policy whose
 * worker names the leaf behaviour (its workers are the child's);
 * *launch for its children. */
int shoal__host_isolated_spec(const shoal_config_t *c, const shoal_config_pool_t *cp, uint64_t gen,
                              shoal_pool_spec_t *specs, shoal_remote_launch_t *launch, char *why,
                              size_t why_size);
/* The spec chain of cp: specs[0] the pool, each nested level the next;
 * *leaf: the level whose workers run the plugin behaviour. The leaf's
 * worker_args are left NULL: they come with the code (code.h). */
void shoal__host_spec_chain(const shoal_config_pool_t *cp, shoal_pool_spec_t *specs,
                            const shoal_config_pool_t **leaf);
/* The PID of the newest pool called name that is not draining (one a
 * reload started beside the one it replaces comes first), or
 * SHOAL_PID_NONE. */
shoal_pid_t shoal__host_pool_pid(const shoal_host_t *h, const char *name);
/* What a pool's spec takes from the host beyond its chain: a pull pool's
 * dead_letter resolved to a PID (shoal__host_pool_pid), and *code made for
 * the leaf's workers, with the source's module and args (code.h) whose
 * copy spec->source_args points at. The caller sets the workers' args
 * from *code and releases it. why: the failure. */
struct shoal_code_s;
int shoal__host_pull_spec(const shoal_host_t *h, const shoal_config_pool_t *cp,
                          shoal_pool_spec_t *spec, struct shoal_code_s **code, char *why,
                          size_t why_size);
/* ---- between host.c, reload.c and host_pull.c ---- */

/* Whether a pool that has not ended sends its dead letters to pid. */
bool shoal__host_pull_holds(const shoal_host_t *h, shoal_pid_t pid);
/* Tells to drain each pool held (drain_held) that no pool sends dead
 * letters to any more. Host thread: shoal__host_tidy, shoal__host_drain. */
void shoal__host_pull_release(shoal_host_t *h);
/* Drains pool hp (draining from now on, its config forgotten): DRAIN is
 * sent now, or held while a pool that has not ended sends it dead letters
 * (a replaced pull pool working off its buffer). */
void shoal__host_drain_one(shoal_host_t *h, shoal_host_pool_t *hp);
/* Shutdown's drain: tells every pool that has not ended to drain (one a
 * pull pool sends dead letters to once that one has ended) and waits until
 * all have ended or the monotonic clock passes end_ns, as
 * shoal__host_wait_ended does (-1: interrupted; else how many had not). */
int shoal__host_pull_drain_all(shoal_host_t *h, uint64_t end_ns, bool (*interrupted)(void *),
                               void *arg);
/* ", pull: prefetch 2, buffer 100, redeliver 0, dead_letter failed, source
 * burn" for a pull pool's start line; "" for a forward pool. */
void shoal__host_pull_text(const shoal_config_pool_t *cp, char *buf, size_t size);

/* Whether a running pool configured as a must become a new pool to be b
 * for its pull keys: a new kind, source (behaviour or module), source_args,
 * redeliver or dead_letter. why gets what changed ("kind forward -> pull",
 * "source burn.burn -> loadgen.loadgen", "source_args changed",
 * "redeliver 0 -> 3", "dead_letter none -> failed"), "" when nothing. */
bool shoal__host_pull_replace(const shoal_config_pool_t *a, const shoal_config_pool_t *b, char *why,
                              size_t size);
/* How a reload's live changes are made: calls to the pools' actors, which
 * run on the dispatcher. by_ns 0: only said (a plan, shoalctl diff); else
 * made, every call waiting until by_ns at most -- one deadline for all of
 * a reload's (with every dispatcher thread stuck, each waited its own 5 s).
 * unanswered counts the calls that timed out: their commands are still
 * queued, and take effect when the actor runs. */
typedef struct shoal_host_live_s {
    uint64_t by_ns;
    unsigned unanswered;
} shoal_host_live_t;

/* What is left until lv->by_ns, in ms (at least 1: a call past it is
 * still made, and times out at once). */
uint64_t shoal__host_live_ms(const shoal_host_live_t *lv);
/* rc, a live change's call's result, counted in lv when it timed out. */
int shoal__host_live_rc(shoal_host_live_t *lv, int rc);

/* A pull pool configured as a, replaced by one configured as b, hands its
 * epic over when both run the same source (behaviour and module) with the
 * same source_args (host_pull.c). */
bool shoal__host_pull_same_epic(const shoal_config_pool_t *a, const shoal_config_pool_t *b);
/* What a reload replacing hp by a pool configured as cp does with its
 * epic, as a plan's words (", taking its epic over", ", its epic done (not
 * run again)", ...); "" when nothing. */
const char *shoal__host_pull_epic_plan(const shoal_host_pool_t *hp, const shoal_config_pool_t *cp);
/* If old's epic goes to np, the pool replacing it, and np's source runs:
 * asks old for it within lv's deadline (SHOAL__POOL_HAND_OVER: its source
 * stops) into *out, true. np's source not running, or no answer: false,
 * note (and the log) say why -- np's source then starts from the start, if
 * it runs. Host thread. */
bool shoal__host_pull_hand_over(shoal_host_t *h, const shoal_host_pool_t *old,
                                const shoal_host_pool_t *np, shoal_host_live_t *lv,
                                shoal_pull_handover_t *out, char *note, size_t size);

/* Pool or source hp, started held by a reload (pool.h: opts held), is told
 * the reload committed (SHOAL__POOL_GO): with lv, a call answered within
 * lv's deadline (once answered, a checkout pool is in its group: a reload
 * tells its new pools before it drains those they replace); NULL, a cast.
 * One not sent (no memory) is owed (go_owed): shoal__host_tidy sends it
 * again. Host thread. */
void shoal__host_go(shoal_host_t *h, shoal_host_pool_t *hp, shoal_host_live_t *lv);
/* As shoal__host_go, the GO carrying the epic of the pool hp
 * replaces (shoal__host_pull_hand_over). */
void shoal__host_go_with(shoal_host_t *h, shoal_host_pool_t *hp, shoal_host_live_t *lv,
                         const shoal_pull_handover_t *epic);
/* Every GO owed, sent again (shoal__host_tidy). */
void shoal__host_go_owed(shoal_host_t *h);

/* What a reload changes in the kept pool hp to become cp (reload_live.c):
 * its bounds, elastic settings, size (an elastic pool keeps its running
 * size unless cp's size changed), mailbox, strategy, and a pull pool's
 * prefetch and buffer, against what it runs with now; said in buf ("api
 * size 2 -> 6; api mailbox 50 -> 80", "" when nothing), each failure said
 * too, and made as lv says. Host thread. */
void shoal__host_live(shoal_host_t *h, shoal_host_pool_t *hp, const shoal_config_pool_t *cp,
                      shoal_host_live_t *lv, char *buf, size_t size);
/* Whether cp sizes itself (autoscale, idle_timeout or max_waiting): a
 * reload keeps the size it runs with unless the file's size changed
 * (reload_live.c, and a swap of its workers: reload_swap.c). */
bool shoal__host_sizes_itself(const shoal_config_pool_t *cp);
/* Whether a reload from `was` to cp keeps the size a pool runs (run)
 * rather than set cp's: one that sizes itself does, unless the size the
 * file writes changed, or it runs no worker and nothing in cp would start
 * one (pool.h: shoal__pool_stays_empty). */
bool shoal__host_keeps_size(const shoal_config_pool_t *was, const shoal_config_pool_t *cp,
                            uint32_t run);
/* A reload's swap of the kept pool hp's workers for cp's code or args
 * (reload_swap.c): its new workers started beside the old ones and waited
 * for (PREPARE); *token for reload.c's COMMIT or ABORT. Host thread. */
int shoal__host_swap_prepare(shoal_host_t *h, const shoal_config_t *c, uint64_t gen,
                             shoal_host_pool_t *hp, const shoal_config_pool_t *cp, uint64_t *token,
                             char *why, size_t why_size);
/* A kept pull pool's live changes to become cp: prefetch and buffer
 * against what it runs with ("jobs prefetch 1 -> 4; jobs buffer 1024 ->
 * 64", "" when none), sent to it (SHOAL_POOL_SET_PREFETCH, _SET_BUFFER)
 * as lv says, each failure said in the text. Host thread. */
void shoal__host_pull_live(shoal_host_t *h, const shoal_host_pool_t *hp,
                           const shoal_config_pool_t *cp, shoal_host_live_t *lv, char *buf,
                           size_t size);

/* Appends to list (n entries, cap allocated) what tracks the actor pid
 * started from cp in generation gen: its name and a reference on its
 * record. NULL on ENOMEM, or when it has ended already. */
shoal_host_pool_t *shoal__host_track(shoal_host_t *h, shoal_host_pool_t **list, size_t *n,
                                     size_t *cap, const shoal_config_pool_t *cp, shoal_pid_t pid,
                                     uint64_t gen);
/* Removes entry i of list (n entries): its reference and name dropped. */
void shoal__host_untrack(shoal_host_t *h, shoal_host_pool_t *list, size_t *n, size_t i);
/* Drops entry e's reference and name; the caller takes it out of its list. */
void shoal__host_entry_release(shoal_host_t *h, shoal_host_pool_t *e);
/* Tracks a pool started from cp in generation gen (takes a reference on
 * its record). NULL on ENOMEM. */
shoal_host_pool_t *shoal__host_pool_add(shoal_host_t *h, const shoal_config_pool_t *cp,
                                        shoal_pid_t pid, uint64_t gen);
/* Waits until every actor of list[0..n) has ended or the monotonic clock
 * (shoal__now_ns) passes end_ns, asking interrupted(arg) (NULL: never)
 * between looks every 5 ms: -1 when it said true, else how many had not
 * ended. */
int shoal__host_wait_ended(const shoal_host_pool_t *list, size_t n, uint64_t end_ns,
                           bool (*interrupted)(void *), void *arg);
/* Forgets pool i (the caller has stopped it or it has ended). */
void shoal__host_pool_forget(shoal_host_t *h, size_t i);
/* Forgets every draining pool that is quiet (its actor and every worker
 * have ended: its counts are final), in one pass over the pools. */
void shoal__host_forget_quiet(shoal_host_t *h);
/* A pool's counters from its record (shoal__pool_peek). */
void shoal__host_peek(const shoal_host_pool_t *hp, shoal_pool_stats_t *st);

/* Whether a pool has elastic facts to show (shoal/pool.h: elastic pools):
 * idle_timeout, max_waiting or autoscale on, or a count one of them left
 * (a reload may have turned it off since). status, the table and /metrics
 * show elastic facts for these pools only; the others' lines, rows and
 * series stay as they were. */
static inline bool shoal__host_is_elastic(const shoal_pool_stats_t *st)
{
    return st->idle_timeout_ms != 0 || st->max_waiting != 0 || st->autoscale != 0 ||
           st->expired != 0 || st->lazy_grown != 0 || st->waiting_refused != 0 ||
           st->autoscale_ups != 0 || st->autoscale_downs != 0;
}

/* A permille as status and the table write it: "61%", "61.5%". */
static inline void shoal__host_percent(uint32_t permille, char *buf, size_t size)
{
    if (permille % 10 == 0)
        snprintf(buf, size, "%" PRIu32 "%%", permille / 10);
    else
        snprintf(buf, size, "%" PRIu32 ".%" PRIu32 "%%", permille / 10, permille % 10);
}
/* Logs the address space the runtime reserved for its actor records (what
 * `ulimit -v` counts; runtime.max_actors scales it). */
void shoal__host_log_reserved(shoal_host_t *h);
/* "unbounded" or the number. */
void shoal__host_mailbox_text(uint32_t mailbox, char buf[24]);

/* ---- between host.c's files (host_log.c, host_ledger.c, host_watch.c,
 * host_drain.c) ---- */

/* The runtime's log_fn (user: the host): its line written as the host's
 * are (host_log.c). Any thread. */
void shoal__host_runtime_log(void *user, int level, const char *line);
/* What gen's pools (every generation's when gen is 0) have counted: the
 * forgotten ones' final counts, and the others' read from their records
 * (host_ledger.c). */
shoal_host_counts_t shoal__host_ledger_of(shoal_host_t *h, uint64_t gen);
/* c as a ledger line says it: "accepted N = handled N + failed N +
 * dropped N + in flight N; refused N", with " + dead-lettered N" before
 * the in flight when any (host_ledger.c). */
void shoal__host_ledger_text(const shoal_host_counts_t *c, char *buf, size_t size);
/* The current stalls (all: past the hand-off mark; else past stall_warn),
 * malloc'd; *n how many. NULL with *n = 0 when there are none
 * (host_watch.c). */
struct shoal_stall_s;
struct shoal_stall_s *shoal__host_stalls_now(shoal_host_t *h, bool all, size_t *n);

#endif
