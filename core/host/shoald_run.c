/* shoald_run.c - the running host (shoald_run.h; the command line is
 * shoald.c): the config loaded, the pools started, then the host thread's
 * loop -- signals, the control socket, reloads, the watchdog, the table
 * every second -- until a stop, and the drain and exit status after it.
 *
 * Under systemd (NOTIFY_SOCKET set; Type=notify, WatchdogSec=): READY=1,
 * RELOADING=1, STOPPING=1, STATUS= and WATCHDOG=1, see notify.h.
 *
 * Signals are blocked in every thread and read from a signalfd by the host
 * thread, which also serves the control socket (runtime.control, see
 * control.h): no handler runs, the host thread does the work, and the
 * SIGHUPs that come during a reload are read as one more.
 *
 * The fatal signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) are the
 * exception: the crash reporter (runtime/fault.h), installed first, writes
 * one log line and a backtrace to stderr, removes the control socket and
 * lets the signal end the process (exit status 128 + signal).
 */
#include "host/shoald_run.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "host/config.h"
#include "host/control.h"
#include "host/host.h"
#include "host/loader.h"
#include "host/metrics.h"
#include "host/notify.h"
#include "host/output.h"
#include "host/shoald_check.h"
#include "runtime/fault.h"

/* The exit status when shutdown gave up on pools still busy. */
#define EXIT_LOST 3

/* stdout and stderr (output.h): what each holds while its reader does not
 * read, and how long shoald waits for a reader at its exit. */
#define TABLE_HOLD (1u << 20)
#define LOG_HOLD (1u << 20)
#define OUTPUT_WAIT_MS 2000

/* The loader's warnings (a plugin's fini that did not return in time), in
 * the host's log. */
static void loader_warn(void *h, const char *line)
{
    shoal__host_log(h, SHOAL_LOG_WARN, "%s", line);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* While draining: a second SIGTERM or SIGINT (a SIGHUP is ignored, and
 * said so once); and the control socket is served meanwhile (status,
 * groups, inspect: shoal__control_set_stopping). */
typedef struct second_s {
    shoal_host_t *h;
    shoal_control_t *control;
    int fd;
    const char *name;
    bool told_hup;
} second_t;

/* SIGUSR1, SIGUSR2 and SIGALRM mean nothing to shoald: said, and ignored
 * (their default action ended the process without a word, its socket
 * left; a plugin's alarm() did the same). */
static bool unused_signal(shoal_host_t *h, uint32_t signo)
{
    if (signo != SIGUSR1 && signo != SIGUSR2 && signo != SIGALRM)
        return false;
    shoal__host_log(h, SHOAL_LOG_WARN,
                    "%s: shoald does not use it (SIGHUP reloads, SIGTERM or SIGINT stops): "
                    "ignored",
                    signo == SIGUSR1   ? "SIGUSR1"
                    : signo == SIGUSR2 ? "SIGUSR2"
                                       : "SIGALRM");
    return true;
}

static bool second_signal(void *arg)
{
    second_t *s = arg;
    if (s->control != NULL) {
        struct pollfd fds[SHOAL_CONTROL_POLLFDS];
        size_t n = shoal__control_pollfds(s->control, fds);
        bool stop = false;
        if (poll(fds, n, 0) >= 0)
            shoal__control_handle(s->control, fds, n, &stop);
    }
    struct signalfd_siginfo si;
    while (read(s->fd, &si, sizeof si) == (ssize_t)sizeof si) {
        if (si.ssi_signo == SIGHUP) {
            if (!s->told_hup)
                shoal__host_log(s->h, SHOAL_LOG_INFO, "SIGHUP while draining: no reload");
            s->told_hup = true;
            continue;
        }
        if (unused_signal(s->h, si.ssi_signo))
            continue;
        s->name = si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM";
        return true;
    }
    return false;
}

/* Ends the process now, with pools still busy: the runtime cannot be
 * destroyed while a thread runs plugin code, so nothing is joined; the
 * control socket goes, and what was written is flushed (systemd's
 * STOPPING=1 too). */
static _Noreturn void abandon(shoal_control_t *control, shoal_notify_t *notify, shoal_output_t *log,
                              int status)
{
    shoal__fault_set_unlink(NULL, 0, 0);
    shoal__control_close(control);
    shoal__notify_flush(notify);
    fflush(stdout);
    shoal__output_drain(log, OUTPUT_WAIT_MS); /* threads may still log: not freed */
    _exit(status);
}

/* While the pools start (asked every SHOAL_ASK_EVERY_MS while a pool's first workers
 * run init): a SIGTERM or SIGINT, taken off the queue (a SIGHUP is left on
 * it: the reload comes after the start), or a `shoalctl stop` -- the
 * control socket is served from here meanwhile (control_reload.c: what it
 * answers while shoald starts). True when one came since the last look:
 * the first stops the start, another the wait for inits that hang. */
typedef struct starting_s {
    shoal_control_t *control;
    shoal_notify_t *notify; /* systemd hears a long step (shoal__notify_starting) */
    shoal_host_t *h;
    const char *name; /* the signal, or "shoalctl stop", once one came */
} starting_t;

static bool start_signal(void *arg)
{
    starting_t *s = arg;
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    struct timespec zero = {0, 0};
    int sig = sigtimedwait(&stop, NULL, &zero);
    const char *name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : NULL;
    bool asked = false; /* a `shoalctl stop` now (a second one is "stopping already") */
    shoal__control_serve(s->control, &asked);
    if (s->name == NULL) /* stopping: STOPPING=1 said it */
        shoal__notify_starting(s->notify, s->h);
    if (name == NULL && asked)
        name = "shoalctl stop";
    if (name == NULL)
        return false;
    if (s->name == NULL) {
        /* Stopping from now on: a later `shoalctl stop` is "stopping
         * already", not a second stop that gives up the wait for the
         * inits (start_settled); what waits for the start is answered as
         * stopping, and systemd hears it. */
        s->name = name;
        shoal__control_set_stopping(s->control, NULL);
        shoal__notify_stopping(s->notify, s->h, name, s->h->config->shutdown.drain_ms);
    }
    return true;
}

/* While shoald's config's plugins load, before the control socket exists:
 * the name of a SIGTERM or SIGINT that waits (left pending), or NULL. */
static const char *load_signal(void *arg)
{
    (void)arg;
    sigset_t p;
    if (sigpending(&p) != 0)
        return NULL;
    return sigismember(&p, SIGTERM) == 1  ? "SIGTERM"
           : sigismember(&p, SIGINT) == 1 ? "SIGINT"
                                          : NULL;
}

/* The table on stdout (--table): a block each second, from the main loop
 * and from a reload's waits (a reload of 10 s froze it). */
typedef struct table_s {
    bool on, tty;
    shoal_output_t *out;
    double last, next; /* the last block's time; the next's */
    uint64_t skipped;  /* blocks not written: stdout not read */
} table_t;

/* A block when its second has come: none while the last one is not read
 * yet (said once), none ever again once stdout cannot be written. */
static void table_tick(table_t *t, shoal_host_t *h)
{
    double now = now_s();
    if (!t->on || now < t->next)
        return;
    t->next += 1;
    if (t->next <= now) /* behind (a long wait): from now on, not a burst to catch up */
        t->next = now + 1;
    if (shoal__output_pump(t->out) != 0) { /* the last block is not read yet */
        if (t->skipped++ == 0)
            shoal__host_log(h, SHOAL_LOG_WARN,
                            "table: stdout is not read: no table until it is; shoald goes on");
        return;
    }
    if (t->skipped != 0)
        shoal__host_log(h, SHOAL_LOG_INFO,
                        "table: stdout is read again (%" PRIu64 " block%s skipped)", t->skipped,
                        t->skipped == 1 ? "" : "s");
    t->skipped = 0;
    shoal__host_table(h, shoal__output_file(t->out), now - t->last, t->tty);
    t->last = now;
    if (ferror(shoal__output_file(t->out))) { /* its reader is gone: the pools go on */
        t->on = false;
        shoal__host_log(h, SHOAL_LOG_WARN,
                        "table: stdout cannot be written (its reader is gone?): no more table; "
                        "shoald goes on");
    }
}

/* While a reload waits for new workers' init (host.h: interrupted):
 * whether a SIGTERM or SIGINT waits, or a `shoalctl stop` came. A signal
 * is left pending: the reload fails at once, changing nothing, and the
 * main loop then takes the signal off the signalfd and drains. Asked every
 * SHOAL_ASK_EVERY_MS while the host thread waits, it also
 *   - pets systemd's watchdog as the main loop does (a checkout pool's
 *     members may take member_start_timeout, past WatchdogSec: an 11.5 s
 *     gap with no WATCHDOG=1 was measured) -- only while the dispatcher
 *     still handles its heartbeat (notify.h);
 *   - serves the control socket (control_reload.c: what it answers while
 *     a reload runs): a 10 s wait left `shoalctl status` unanswered. */
typedef struct reloading_s {
    shoal_notify_t *notify;
    shoal_host_t *h;
    shoal_control_t *control;
    table_t *table;
    bool stop; /* a `shoalctl stop` came while a reload ran */
} reloading_t;

/* While the host thread waits on a plugin it loads or releases (its
 * constructors' trial, its init or fini: up to 10 s each, at a reload or
 * a diff): the watchdog is petted as the main loop does, only while the
 * dispatcher still handles its heartbeat (loader.h, shoal__loader_set_tend),
 * the control socket is served (a stop asked there, or a SIGTERM, stops a
 * reload or a diff at its next `interrupted`: no more plugin is loaded)
 * and, in a reload or a diff, the table goes on (a fini may also run from
 * the main loop's own work, in the midst of changing the pools' list: no
 * table then). */
static void loading(void *arg)
{
    reloading_t *r = arg;
    shoal__notify_tick(r->notify, r->h);
    shoal__control_serve(r->control, &r->stop);
    if (r->h->step[0] != '\0' || shoal__control_diffing(r->control))
        table_tick(r->table, r->h);
}

static bool stop_pending(void *arg)
{
    reloading_t *r = arg;
    loading(r); /* the watchdog and the socket, as while a plugin loads */
    sigset_t p;
    return r->stop ||
           (sigpending(&p) == 0 && (sigismember(&p, SIGTERM) == 1 || sigismember(&p, SIGINT) == 1));
}

/* run_for_ms 0: until a signal or a stop; control (NULL: none) replaces
 * the config's runtime.control. */
int shoald_run(const char *path, uint64_t run_for_ms, bool table, const char *control_path)
{
    /* Before any thread exists: every thread inherits the mask, and the
     * signals reach only the signalfd read below. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGHUP);
    sigaddset(&sigs, SIGUSR1); /* unused: said and ignored (unused_signal) */
    sigaddset(&sigs, SIGUSR2);
    sigaddset(&sigs, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    shoal_notify_t *notify = shoal__notify_open(); /* changes the environment: no thread yet */
    shoal_config_t *c = NULL;
    shoal_loader_t *loader = NULL;
    shoal_control_t *control = NULL;
    shoal_metrics_t *metrics = NULL;
    shoal_host_t *h = NULL;
    shoal_output_t *tout = NULL, *lout = NULL; /* stdout, stderr */
    shoal_diag_t err = {0};
    char buf[1200];
    int rc;
    int sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0 || shoal__output_open(STDOUT_FILENO, TABLE_HOLD, &tout) != 0 ||
        shoal__output_open(STDERR_FILENO, LOG_HOLD, &lout) != 0) {
        fprintf(stderr, "shoald: %s\n", sfd < 0 ? strerror(errno) : shoal_strerror(SHOAL_ENOMEM));
        goto fail;
    }
    /* Before the first plugin is loaded (its init runs then). Text until the
     * config says otherwise. This thread's alternate stack lives until exit. */
    shoal__fault_thread_start(NULL, "the host thread");
    int frc = shoal__fault_install(shoal__output_fd(lout), SHOAL_FAULT_TEXT);
    if (frc != 0)
        fprintf(stderr, "shoald: warning: no crash reports: %s\n", strerror(-frc));

    /* A SIGTERM or SIGINT while the plugins load (each up to 10 s) loads no
     * more: stopped, as during the pools' start. */
    if ((rc = shoald_load(path, load_signal, NULL, &c, &loader)) != 0) {
        if (rc == 1) {
            rc = 0;
            goto stopped;
        }
        goto fail;
    }
    shoal__fault_set_format(c->log.format == SHOAL_LOG_FORMAT_JSON ? SHOAL_FAULT_JSON
                                                                   : SHOAL_FAULT_TEXT);
    if (control_path != NULL) { /* --control: for this run, whatever the file says */
        char *copy = strdup(control_path);
        if (copy == NULL) {
            fprintf(stderr, "shoald: %s\n", shoal_strerror(SHOAL_ENOMEM));
            goto fail;
        }
        free(c->runtime.control);
        c->runtime.control = copy;
    }
    uint64_t drain_ms = c->shutdown.drain_ms;
    if (c->runtime.control != NULL &&
        shoal__control_open(c->runtime.control, &control, &err) != SHOAL_OK) {
        /* From the file: said at its runtime.control, with the way out. */
        const shoal_node_t *rt_at = shoal__node_get(c->root, "runtime");
        const shoal_node_t *at = rt_at != NULL ? shoal__node_get(rt_at, "control") : NULL;
        if (control_path == NULL && at != NULL) {
            char msg[sizeof err.msg];
            snprintf(msg, sizeof msg, "%s", err.msg);
            shoal__diag_set(&err, at->file, at->line, at->col,
                            "runtime.control: %s; or run shoald with --control PATH", msg);
        }
        fprintf(stderr, "%s\n", shoal__diag_format(&err, buf, sizeof buf));
        goto fail;
    }
    if (control != NULL)
        (void)shoal__control_unlink_on_crash(control); /* a crash removes it too */
    /* metrics.h: bound before any pool starts */
    if (shoal__metrics_open(c, &metrics, &err) != SHOAL_OK) {
        fprintf(stderr, "%s\n", shoal__diag_format(&err, buf, sizeof buf));
        goto fail;
    }
    /* The host first, then the control socket, then the pools: the socket
     * is served while they start (start_signal). */
    rc = shoal__host_create(c, loader, shoal__output_file(lout), &h, &err);
    c = NULL; /* the host's now, or freed by it */
    if (rc != SHOAL_OK) {
        fprintf(stderr, "%s\n", shoal__diag_format(&err, buf, sizeof buf));
        goto fail;
    }
    h->control_fixed = control_path != NULL; /* a reload does not compare it */
    if (control != NULL && (rc = shoal__control_start(control, h, path)) != SHOAL_OK) {
        fprintf(stderr, "shoald: cannot serve the control socket: %s\n", shoal_strerror(rc));
        goto fail;
    }
    starting_t sig = {.control = control, .notify = notify, .h = h};
    rc = shoal__host_start_pools(h, start_signal, &sig, &err);
    if (rc != SHOAL_OK) {
        const char *why = shoal__diag_format(&err, buf, sizeof buf);
        char failed[sizeof buf + 32];
        if (sig.name != NULL) {
            fprintf(stderr, "shoald: %s while the pools started: stopped (%s)\n", sig.name, why);
        } else {
            fprintf(stderr, "%s\n", why);
            snprintf(failed, sizeof failed, "its start failed: %s", why);
        }
        /* a reload asked meanwhile: not done (after a stop, told so then) */
        shoal__control_set_stopping(control, sig.name == NULL ? failed : NULL);
        if (h->stuck) /* an init never returned; its thread cannot be joined */
            abandon(control, notify, lout, sig.name != NULL ? EXIT_LOST : 2);
        if (sig.name != NULL) {
            rc = 0;
            goto stopped;
        }
        goto fail;
    }
    shoal__loader_set_warn(loader, loader_warn, h);
    shoal__host_log_reserved(h);
    unsigned nthreads = shoal_runtime_threads(h->rt);
    char sources[48] = "";
    if (h->nsources != 0)
        snprintf(sources, sizeof sources, ", %zu source%s", h->nsources,
                 h->nsources == 1 ? "" : "s");
    shoal__host_log(h, SHOAL_LOG_INFO, "running %s: %zu pool%s%s on %u thread%s%s%s", path,
                    h->npools, h->npools == 1 ? "" : "s", sources, nthreads,
                    nthreads == 1 ? "" : "s", control ? ", control socket " : "",
                    control ? h->config->runtime.control : "");
    table_t tab = {.on = table, .tty = isatty(STDOUT_FILENO), .out = tout};
    reloading_t reloading = {.notify = notify, .h = h, .control = control, .table = &tab};
    h->interrupted = stop_pending; /* for reloads (host.h) */
    h->interrupted_arg = &reloading;
    shoal__loader_set_tend(loader, loading, &reloading); /* on this thread only */
    shoal__metrics_attach(metrics, h);
    if (sig.name == NULL)               /* else it stops now: STOPPING=1 was said (start_signal) */
        shoal__notify_ready(notify, h); /* systemd: READY=1; reloads tell it too */
    double start = now_s(), next = start + 1;
    tab.last = start;
    tab.next = next;
    bool stop = false;
    const char *why = "--run-for";
    if (sig.name != NULL) {
        /* A stop taken off the queue (start_signal) just as the start
         * ended well: it was heard, so it stops now. */
        stop = true;
        why = sig.name;
    }
    uint64_t drops_said = 0; /* log lines */
    while (!stop) {
        double t = now_s();
        if (run_for_ms != 0 && (t - start) * 1e3 >= (double)run_for_ms)
            break;
        double wait = (tab.on && tab.next < next ? tab.next : next) - t;
        if (run_for_ms != 0 && start + (double)run_for_ms / 1e3 - t < wait)
            wait = start + (double)run_for_ms / 1e3 - t;
        /* The signalfd, then what the control socket waits on (never
         * longer than its next deadline). */
        struct pollfd fds[1 + SHOAL_CONTROL_POLLFDS] = {{.fd = sfd, .events = POLLIN}};
        size_t nctl = control ? shoal__control_pollfds(control, fds + 1) : 0;
        int ms = wait <= 0 ? 0 : (int)(wait * 1e3) + 1;
        int cms = control ? shoal__control_timeout(control) : -1;
        if (cms >= 0 && cms < ms)
            ms = cms;
        int nms = shoal__notify_timeout(notify); /* the watchdog's next turn */
        if (nms >= 0 && nms < ms)
            ms = nms;
        if (ms > 100 && shoal__output_pump(lout) + shoal__output_pump(tout) != 0)
            ms = 100; /* what a reader did not take yet goes out soon after it reads */
        if (shoal__control_reload_wanted(control) || shoal__control_diff_wanted(control))
            ms = 0; /* asked while the last reload (or diff) ran: it runs now */
        bool hup = false;
        if (poll(fds, 1 + nctl, ms) > 0 && (fds[0].revents & POLLIN)) {
            struct signalfd_siginfo si;
            /* Drain every pending signal: SIGHUPs that came during a reload
             * are one more reload, not many. */
            while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
                if (si.ssi_signo == SIGHUP) {
                    /* in its place among the socket's requests: after the
                     * diffs asked before it (control_diff.c) */
                    if (control != NULL)
                        shoal__control_hup(control);
                    else
                        hup = true;
                } else if (unused_signal(h, si.ssi_signo)) {
                    continue;
                } else {
                    stop = true;
                    why = si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM";
                }
            }
        }
        if (!stop && control != NULL) {
            shoal__control_handle(control, fds + 1, nctl, &stop); /* deadlines too */
            if (stop)
                why = "shoalctl stop";
        }
        /* A `shoalctl diff`, out of the socket's handling: the socket is
         * served from within it (control_diff.c). One a turn: the signals
         * are read between two. */
        if (!stop && shoal__control_diff_wanted(control)) {
            shoal__control_diff_run(control);
            if (reloading.stop) { /* a `shoalctl stop` while it ran */
                stop = true;
                why = "shoalctl stop";
            } else if (stop_pending(&reloading)) {
                continue; /* a SIGTERM or SIGINT came: read next turn, before any reload */
            }
        }
        /* A SIGHUP, or a `shoalctl reload` (which waits for this one to
         * end: control_reload.c), once the diffs asked before it ran. */
        if (!stop && (hup || shoal__control_reload_wanted(control))) {
            shoal__host_reload(h, path, NULL, 0);
            if (reloading.stop) { /* a `shoalctl stop` while it ran stopped it */
                stop = true;
                why = "shoalctl stop";
            }
        }
        shoal__notify_tick(notify, h);
        if (now_s() >= next) {
            shoal__host_tidy(h);
            shoal__host_watch(h);
            shoal__notify_status(notify, h);
            shoal__host_log_drops(h, lout, &drops_said);
            next += 1;
            if (next <= now_s()) /* behind (a long reload): not a burst to catch up */
                next = now_s() + 1;
        }
        table_tick(&tab, h);
        shoal__metrics_sync(metrics, h); /* what /metrics reads: pools, generation */
    }
    drain_ms = h->config->shutdown.drain_ms; /* a reload may have changed it */
    shoal__host_log(h, SHOAL_LOG_INFO, "%s: draining every pool (at most %llu ms)", why,
                    (unsigned long long)drain_ms);
    if (sig.name == NULL) /* else said when it came (start_signal) */
        shoal__notify_stopping(notify, h, why, drain_ms);
    double t0 = now_s();
    shoal__control_set_stopping(control, NULL);
    second_t again = {.h = h, .control = control, .fd = sfd};
    int busy = shoal__host_drain(h, drain_ms, second_signal, &again);
    if (busy < 0) {
        /* What was not settled is lost, said as a drain that ran out says
         * it: the stuck handlers, then the count and the ledger. */
        shoal__host_report_lost(h);
        shoal__host_log(h, SHOAL_LOG_WARN, "%s while draining: exiting now (status %d)", again.name,
                        EXIT_LOST);
        abandon(control, notify, lout, EXIT_LOST);
    }
    if (busy > 0) {
        shoal__host_report_lost(h);
        shoal__host_log(h, SHOAL_LOG_WARN,
                        "drained for %.0f ms; %d pool%s still busy: exiting without waiting for "
                        "them (status %d)",
                        (now_s() - t0) * 1e3, busy, busy == 1 ? "" : "s", EXIT_LOST);
        abandon(control, notify, lout, EXIT_LOST);
    }
    /* No pool is busy, but a handler may still be in plugin code outside
     * every pool the host keeps (an init a failed reload gave up on): the
     * runtime's threads cannot be joined while it runs. */
    double spent_ms = (now_s() - t0) * 1e3;
    size_t stuck =
        shoal__host_wait_stuck(h, spent_ms < (double)drain_ms ? drain_ms - (uint64_t)spent_ms : 0,
                               second_signal, &again, "shutdown");
    if (again.name != NULL) {
        shoal__host_log(h, SHOAL_LOG_WARN, "%s while draining: exiting now (status %d)", again.name,
                        EXIT_LOST);
        abandon(control, notify, lout, EXIT_LOST);
    }
    if (stuck != 0) {
        shoal__host_log(
            h, SHOAL_LOG_WARN,
            "drained for %.0f ms; 0 pools still busy, but %zu handler%s still in plugin "
            "code: exiting without waiting for %s (status %d)",
            (now_s() - t0) * 1e3, stuck, stuck == 1 ? "" : "s", stuck == 1 ? "it" : "them",
            EXIT_LOST);
        abandon(control, notify, lout, EXIT_LOST);
    }
    shoal__host_log(h, SHOAL_LOG_INFO, "drained in %.0f ms; 0 pools still busy, stopped",
                    (now_s() - t0) * 1e3);
    shoal__fault_set_unlink(NULL, 0, 0); /* from here on the path may be another shoald's */
    shoal__control_close(control);
    shoal__metrics_close(metrics);              /* before the records it holds go */
    shoal__loader_set_tend(loader, NULL, NULL); /* it pets through h */
    shoal__host_destroy(h);                     /* its plugins' fini: said in its log */
    shoal__loader_set_warn(loader, NULL, NULL);
    shoal__loader_destroy(loader);
    close(sfd);
    shoal__notify_close(notify); /* after the heartbeat actor, gone with the host */
    shoal__output_close(tout, OUTPUT_WAIT_MS);
    shoal__output_close(lout, OUTPUT_WAIT_MS); /* every thread that logs is gone */
    return 0;
fail: /* before anything ran: undone in reverse */
    rc = 2;
stopped:
    shoal__metrics_close(metrics); /* before the records it holds go */
    shoal__fault_set_unlink(NULL, 0, 0);
    shoal__control_close(control); /* before the runtime goes */
    shoal__host_destroy(h);
    if (loader != NULL)
        shoal__loader_set_warn(loader, NULL, NULL);
    shoal__config_free(c);
    if (loader != NULL)
        shoal__loader_destroy(loader);
    if (sfd >= 0)
        close(sfd);
    shoal__notify_close(notify);
    shoal__output_close(tout, OUTPUT_WAIT_MS);
    shoal__output_close(lout, OUTPUT_WAIT_MS);
    return rc;
}
