/* shoald.c - the host's command line (the running host -- signals, the
 * main loop, the drain -- is shoald_run.c; what reads a config file without
 * running it -- --check, --diff, --help-config -- is shoald_check.c).
 *
 *   shoald [--run-for DURATION] [--no-table] FILE
 *                           run the pools FILE declares, in the foreground;
 *                           a table row per pool every second on stdout,
 *                           log lines on stderr; SIGTERM or SIGINT (or the
 *                           end of --run-for, or shoalctl stop) drains the
 *                           pools within shutdown.drain: when all have
 *                           drained and no handler is left in plugin code
 *                           (an init a reload gave up on: waited for until
 *                           the deadline, then named, exit 3), joins every
 *                           thread and exits 0; when some are still busy at
 *                           the deadline, logs each handler still stuck and
 *                           what is lost (counted as dropped in the ledger)
 *                           and exits 3 at once, without waiting for
 *                           threads stuck in plugin code. A second SIGTERM
 *                           or SIGINT while draining exits 3 at once, said
 *                           the same way. SIGUSR1, SIGUSR2 and SIGALRM are
 *                           logged and ignored. A SIGTERM or SIGINT while the
 *                           pools start stops the start: exit 0 once every
 *                           actor has ended, 3 when an init still runs
 *                           after shutdown.drain (named in the log); a
 *                           failed start exits 2 the same way (a SIGHUP
 *                           meanwhile waits for the start).
 *   shoald --control SOCKET ... FILE
 *                           serve the control socket at SOCKET instead of
 *                           FILE's runtime.control (several instances of one
 *                           file, tests, the packaged unit)
 *   shoald --check FILE     exit 0: valid; 2: an error, printed as
 *                           file:line:col: what was expected
 *   shoald --check --diff [--control SOCKET] FILE
 *                           also asks the shoald listening at SOCKET (else
 *                           at FILE's runtime.control) what a reload from
 *                           FILE would change (nothing changes)
 *   shoald --version | --help
 *
 * Options come in any order (before or after FILE); a usage error names
 * the option and exits 2.
 *   shoald --help-config [FILE]
 *                           the schema: every key, type, default, doc; with
 *                           FILE, also the args each behaviour of FILE's
 *                           plugins takes (argcheck.h)
 *
 *   SIGHUP                  reload FILE (reload.c: all or nothing)
 *
 * Signals, systemd's notify protocol and crash reports while FILE runs:
 * shoald_run.c.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/args.h"
#include "host/config.h"
#include "host/isolated.h"
#include "host/shoald_check.h"
#include "host/shoald_run.h"
#include "host/version.h"

static void usage(FILE *to)
{
    fprintf(to, "usage: shoald [--run-for DURATION] [--no-table] [--control SOCKET] FILE\n"
                "       shoald --check [--diff] [--control SOCKET] FILE\n"
                "       shoald --help-config [FILE]\n"
                "       shoald --version | --help\n"
                "  FILE            run the pools FILE declares until SIGTERM or SIGINT\n"
                "  --run-for D     stop by itself after D (e.g. 10s), as on SIGTERM\n"
                "  --no-table      no per-second table on stdout\n"
                "  --control SOCKET\n"
                "                  serve the control socket at SOCKET instead of FILE's\n"
                "                  runtime.control\n"
                "  --check FILE    validate FILE (YAML), load its plugins, resolve its\n"
                "                  workers; exit 0 if it is valid, 2 if not\n"
                "  --check --diff FILE\n"
                "                  also print what a reload of the running shoald from FILE\n"
                "                  would change, without changing it; that shoald is the one\n"
                "                  at --control SOCKET, else at FILE's runtime.control\n"
                "  --help-config   print every config key with its type, default and meaning\n"
                "  --help-config FILE\n"
                "                  also load FILE's plugins and print the args each of their\n"
                "                  behaviours takes (key, type, default, range, meaning)\n"
                "  --version       print the version and exit\n"
                "exit status: 0 stopped after draining every pool; 2 usage or config error;\n"
                "  3 stopped with pools still busy, or a handler still in plugin code, after\n"
                "  shutdown.drain, or on a second SIGTERM/SIGINT while draining (the log\n"
                "  says what was lost)\n");
}

/* A usage error (version.h): what is wrong, a hint; exit status 2. */
static int bad(const char *fmt, const char *what)
{
    return shoal__usage_error("shoald", fmt, what);
}

int main(int argc, char **argv)
{
    /* A reader of stdout or stderr that goes away (`shoald x.yaml | head`, a
     * log shipper restarting) must not kill the host: writes to it fail
     * with EPIPE instead, and the table stops (below). An isolated pool's
     * child inherits this. */
    signal(SIGPIPE, SIG_IGN);
    /* The child process of an isolated pool (host/isolated.h): started by
     * a shoald, with its descriptors, never by hand. */
    if (argc == 2 && strcmp(argv[1], "--isolated-worker") == 0)
        return shoal__isolated_main();
    uint64_t run_for_ms = 0;
    bool table = true, check_only = false, with_diff = false, help_cfg = false;
    const char *file = NULL, *control = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            shoal__version_print(stdout, "shoald");
            return 0;
        } else if (strcmp(a, "--run-for") == 0) {
            if (i + 1 >= argc)
                return bad("%s needs a duration (e.g. 10s)", a);
            shoal_node_t n = {.kind = SHOAL_NODE_SCALAR, .text = argv[++i], .file = "--run-for"};
            shoal_diag_t err = {0};
            char buf[600];
            if (shoal__arg_duration_ms(&n, NULL, 0, &run_for_ms, &err) != SHOAL_OK) {
                fprintf(stderr, "shoald: %s\n", shoal__diag_format(&err, buf, sizeof buf));
                return 2;
            }
        } else if (strcmp(a, "--control") == 0) {
            if (i + 1 >= argc || argv[i + 1][0] == '\0')
                return bad("%s needs a socket path", a);
            control = argv[++i];
        } else if (strcmp(a, "--no-table") == 0) {
            table = false;
        } else if (strcmp(a, "--check") == 0) {
            check_only = true;
        } else if (strcmp(a, "--diff") == 0) {
            with_diff = true;
        } else if (strcmp(a, "--help-config") == 0) {
            help_cfg = true;
        } else if (a[0] == '-' && a[1] != '\0') {
            return bad("unknown option '%s'", a);
        } else if (file != NULL) {
            return bad("unexpected argument '%s' (one FILE only)", a);
        } else {
            file = a;
        }
    }
    if (help_cfg && (check_only || with_diff || control || run_for_ms || !table))
        return bad("%s takes only a FILE", "--help-config");
    if (help_cfg && file == NULL) {
        shoal__config_help(stdout);
        return 0;
    }
    if (help_cfg)
        return shoald_help_config(file);
    if (with_diff && !check_only)
        return bad("%s goes with --check (shoald --check --diff FILE)", "--diff");
    if (check_only && (run_for_ms || !table))
        return bad("%s does not run the pools: no --run-for, no --no-table", "--check");
    if (check_only && !with_diff && control != NULL)
        return bad("%s asks a running shoald: it goes with --check --diff", "--control");
    if (file == NULL)
        return bad("%s", "no FILE: name the config to run (shoald FILE)");
    if (check_only && !with_diff)
        return shoald_check(file, NULL);
    if (check_only) {
        char *own = NULL;
        int rc = shoald_check(file, control == NULL ? &own : NULL);
        if (rc == 0 && control == NULL && own == NULL)
            rc = bad("--diff: %s sets no runtime.control: name the socket with --control SOCKET",
                     file);
        if (rc == 0)
            rc = shoald_diff(file, control != NULL ? control : own,
                             control != NULL ? "from --control" : "the config's runtime.control");
        free(own);
        return rc;
    }
    return shoald_run(file, run_for_ms, table, control);
}
