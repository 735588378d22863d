/* shoalctl.c - talks to shoald's control socket (protocol: control.h).
 *
 *   shoalctl [--socket PATH] [--timeout MS] COMMAND [ARGS...]
 *   shoalctl help [COMMAND] | COMMAND --help | --help | --version
 *
 * The commands and their arguments are the table below (each one's usage
 * is what `shoalctl help COMMAND` prints, without connecting).
 *
 * The socket: --socket PATH, else $SHOAL_SOCKET, else ./shoal.sock if it
 * exists, else /run/shoal/shoal.sock (the installed service's); a "cannot
 * reach" error says which one was tried and why.
 * --timeout before the command bounds the whole exchange (connect, write,
 * read; default 5000 ms, for inspect, scale and epic 7000, for reload
 * 60000); after `call`, it is the call's
 * own timeout, and shoalctl then waits that plus 2 s unless --timeout was
 * also given before.
 * Exit: 0 done, 1 refused (busy, unknown pool, failed reload) or no answer
 * in time, 2 usage or no connection.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/client.h"
#include "host/num.h"
#include "host/version.h"
#include "shoal/pool.h"
#include "shoal/types.h"

#define DEFAULT_TIMEOUT_MS 5000
/* inspect, scale and epic: shoald's own deadline on the pool's answer is 5 s
 * (and 500 ms for its host thread), so its word that the pool did not
 * answer ({"error":"unresponsive"}, "timed out") comes before ours. */
#define ACTOR_JOB_TIMEOUT_MS 7000
/* A reload may wait on a config still being written (2 s), on each new
 * plugin's constructors and init (10 s each) and on new workers' init (10
 * s a pool): its answer gets longer than any other command's. */
#define RELOAD_TIMEOUT_MS 60000
#define CALL_MARGIN_MS 2000         /* beyond a call's own timeout */
#define CALL_DEFAULT_MS 5000        /* shoald's, for a call without --timeout */
#define CALL_DEFAULT_TEXT "5000"    /* the same, as sent */
#define CALL_TIMEOUT_MAX_MS 3600000 /* shoald's bound on a call's timeout */
#define SERVICE_SOCKET "/run/shoal/shoal.sock"
#define REQ_MAX 65536

typedef struct cmd_s {
    const char *name;
    const char *args;  /* the synopsis after the name */
    unsigned min, max; /* positional words (DATA counts as one, however many) */
    const char *what;  /* one line, for --help */
    const char *help;  /* what it does, its arguments, its options */
} cmd_t;

static const cmd_t cmds[] = {
    {"status", "", 0, 0, "generation, reloads, ledger, a line per pool",
     "  The generation, the reload counts, the threads, the ledger (accepted =\n"
     "  handled + failed + dropped + in flight, per generation and in total), the\n"
     "  control connections, a line per pool, and the handlers stalled now.\n"
     "  Takes no arguments.\n"},
    {"groups", "", 0, 0, "checkout pools by group: members in use and free",
     "  A line per checkout group (the pools with the same group:), in the\n"
     "  config's order: its pools, their members in use, free and starting, and\n"
     "  the takers queued, summed, then each pool's in use and free, e.g.\n"
     "  `group dbs pools 2 in_use 3 free 5 starting 0 queued 0: db-a (in_use 3\n"
     "  free 1), db-b (in_use 0 free 4)`. shoal_take_group picks among them.\n"
     "  Takes no arguments.\n"},
    {"inspect", "[POOL]", 0, 1, "a pool's inspection (JSON), or every pool's",
     "  POOL's inspection as one JSON object; without POOL, an object of every\n"
     "  pool's, by name. Each names its kind (forward or pull); a pull pool's has\n"
     "  a \"pull\" object: its buffer, what its workers hold and could take,\n"
     "  received/completed/refused, and its source.\n"},
    {"send", "[--type N] POOL DATA", 2, 2, "send DATA to the pool (type 1 unless --type)",
     "  Sends DATA (the words after POOL, joined by spaces) to POOL as one message,\n"
     "  without waiting for it to be handled. Exit 1 when the pool refused it.\n"
     "  --type N   the message type (decimal, or hex after 0x); default 1, the\n"
     "             ordinary message of the bundled plugins (echo, burn, sleep,\n"
     "             sink, crash); a plugin's own types, e.g. echo's and\n"
     "             loadgen's stats request 0xFFFF0001, are chosen with it\n"
     "  --         the end of the options: DATA may then start with -- or be -h\n"},
    {"call", "[--type N] [--timeout MS] [--raw] POOL DATA", 2, 2,
     "call the pool, print its reply (escaped unless text)",
     "  Calls POOL with DATA (the words after POOL, joined by spaces) and prints\n"
     "  the reply: as it is when it is printable text (a newline added if it has\n"
     "  none), else escaped (\\n, \\t, \\r, \\\\, and \\xNN, two hex digits, for any\n"
     "  other byte, NUL included), so a terminal never gets raw bytes.\n"
     "  --type N     the message type (decimal, or hex after 0x); default 1, the\n"
     "               ordinary message of the bundled plugins; e.g. 0xFFFF0001 asks\n"
     "               echo and loadgen for their stats\n"
     "  --timeout MS how long the pool may take (default 5000); shoalctl waits\n"
     "               that plus 2 s\n"
     "  --raw        write the reply's bytes exactly, nothing added\n"
     "  --           the end of the options: DATA may then start with -- or be -h\n"},
    {"scale", "POOL N|MIN..MAX", 2, 2, "resize the pool, or set its bounds (min..max)",
     "  POOL N: resizes POOL to N workers, within the pool's min and max (its\n"
     "  config's min: and max:, or autoscale's), and prints the size it has now,\n"
     "  e.g. `api: 8 workers`, or `api: 1024 workers (asked 5000; clamped to max\n"
     "  1024)`. An autoscaled pool keeps N only until autoscale's next decision\n"
     "  (none for its cooldown after the resize). At 0, a pool that neither\n"
     "  autoscale nor idle_timeout starts is parked: every send is refused,\n"
     "  counted, until it is scaled up (said: `api: 0 workers (parked: ...)`).\n"
     "  POOL MIN..MAX: sets the pool's bounds live, e.g. `scale api 2..16`, its\n"
     "  size clamped into them, and prints `api: bounds 2..16, 4 workers`, or\n"
     "  `api: bounds 2..3, 3 workers (clamped from 9)`. An autoscaled pool scales\n"
     "  within them from then on. MAX may not pass the most workers the pool was\n"
     "  started for (its max at start): refused, exit 1; a reload with a larger\n"
     "  max replaces the pool. A reload sets the config's bounds again.\n"},
    {"epic", "POOL [ARGS]", 1, 2, "start a pull pool's source again (a new epic)",
     "  Starts POOL's source from the beginning: a new epic, with the config's\n"
     "  source_args, or with ARGS (the words after POOL, joined by spaces): the\n"
     "  source's args for this epic as a YAML mapping, checked as the config's\n"
     "  are, e.g.  shoalctl epic jobs '{from: 1, to: 5000, step: 2}'  (a bad\n"
     "  one: `epic args:1:10: ...`, exit 2). A source started again after it\n"
     "  failed keeps its epic's args. Only when the last epic is over: while one\n"
     "  runs it prints `busy: POOL is working through an epic (N items so far)`,\n"
     "  exit 1.\n"},
    {"reload", "", 0, 0, "re-read shoald's config file (as SIGHUP)",
     "  Re-reads shoald's config file, as SIGHUP: all or nothing. Prints the new\n"
     "  generation; a failed reload prints FILE:LINE:COL: what was wrong, exit 1.\n"
     "  Waits 60 s for the answer unless --timeout says otherwise; past it the\n"
     "  reload goes on in shoald (its outcome: shoald's log, `shoalctl status`).\n"
     "  One asked while another runs waits for it, then runs; one asked while\n"
     "  shoald starts runs once the start has ended. While a reload runs,\n"
     "  status says so, and scale, epic and diff are refused (busy); while\n"
     "  shoald starts, send and call are refused too.\n"},
    {"diff", "[FILE]", 0, 1, "what a reload from FILE (or shoald's own) would do",
     "  What a reload from FILE would change, without changing anything; without\n"
     "  FILE, from shoald's own config file (what `reload` would read). It loads\n"
     "  the plugins new to shoald that FILE names (up to 10 s each); shoald runs\n"
     "  diffs one at a time and answers other requests meanwhile. Waits 60 s\n"
     "  for the answer unless --timeout says otherwise.\n"},
    {"stop", "", 0, 0, "drain every pool and stop shoald",
     "  Drains every pool and stops shoald (as SIGTERM). While shoald starts,\n"
     "  it gives the start up: every pool started stops.\n"},
    {"help", "[COMMAND]", 0, 1, "a command's usage (no connection)",
     "  This help, or COMMAND's, without connecting to shoald.\n"},
};
#define NCMDS (sizeof cmds / sizeof cmds[0])
/* "status, inspect, ...": the commands' names, from the table. */
static const char *command_list(void)
{
    static char list[160];
    if (list[0] == '\0')
        for (size_t i = 0, n = 0; i < NCMDS && n < sizeof list; i++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", cmds[i].name);
    return list;
}

static void usage(FILE *to)
{
    fprintf(to, "usage: shoalctl [--socket PATH] [--timeout MS] COMMAND [ARGS...]\n"
                "       shoalctl help [COMMAND] | COMMAND --help | --help | --version\n"
                "commands:\n");
    for (size_t i = 0; i < NCMDS; i++) {
        char syn[64];
        snprintf(syn, sizeof syn, "%s%s%s", cmds[i].name, cmds[i].args[0] ? " " : "", cmds[i].args);
        if (strlen(syn) > 28)
            fprintf(to, "  %s\n  %-28s %s\n", syn, "", cmds[i].what);
        else
            fprintf(to, "  %-28s %s\n", syn, cmds[i].what);
    }
    fprintf(to, "options:\n"
                "  --socket PATH  shoald's control socket; else $SHOAL_SOCKET, else\n"
                "                 ./shoal.sock if it exists, else " SERVICE_SOCKET "\n"
                "  --timeout MS   for the whole exchange (default 5000; inspect, scale and\n"
                "                 epic 7000: shoald's own 5.5 s first; reload, diff 60000)\n"
                "  --version      print the version and exit\n"
                "`shoalctl help COMMAND` says what COMMAND does and takes.\n"
                "Exit: 0 done, 1 refused or no answer in time, 2 usage or no connection.\n");
}

static void cmd_usage(FILE *to, const cmd_t *c)
{
    fprintf(to, "usage: shoalctl [--socket PATH] [--timeout MS] %s%s%s\n%s", c->name,
            c->args[0] ? " " : "", c->args, c->help);
}

/* A usage error: one line naming what is wrong, then a hint (c's usage,
 * or --help); returns the exit status 2. */
static int bad(const cmd_t *c, const char *fmt, ...) SHOAL_PRINTF(2, 3);
static int bad(const cmd_t *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("shoalctl: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (c != NULL)
        fprintf(stderr, "\nusage: shoalctl %s%s%s (see shoalctl help %s)\n", c->name,
                c->args[0] ? " " : "", c->args, c->name);
    else
        fputs("\nTry 'shoalctl --help'.\n", stderr);
    return 2;
}

static const cmd_t *find(const char *name)
{
    for (size_t i = 0; i < NCMDS; i++)
        if (strcmp(cmds[i].name, name) == 0)
            return &cmds[i];
    return NULL;
}

static bool millis(const char *s, uint64_t *out)
{
    return shoal__num_parse(s, 10, 24ULL * 3600 * 1000, out) && *out != 0;
}

/* A message type: decimal, or hex after 0x; at most UINT32_MAX. */
static bool msg_type(const char *s, unsigned long *out)
{
    uint64_t v;
    if (!shoal__num_parse(s, 0, UINT32_MAX, &v))
        return false;
    *out = (unsigned long)v;
    return true;
}

/* The request being built: words joined by spaces. */
typedef struct req_s {
    char buf[REQ_MAX];
    size_t n;
    bool overflow;
} req_t;

static void add(req_t *r, const char *word)
{
    int w = snprintf(r->buf + r->n, sizeof r->buf - r->n, "%s%s", r->n ? " " : "", word);
    if (w < 0 || (size_t)w >= sizeof r->buf - r->n)
        r->overflow = true;
    else
        r->n += (size_t)w;
}

/* ---- answers ----------------------------------------------------------------- */

typedef struct answer_s {
    const char *pool;
    bool raw;
} answer_t;

/* call: the server adds one '\n' after the payload. */
static int call_body(void *arg, const char *data, size_t len, FILE *out, FILE *err)
{
    const answer_t *a = arg;
    (void)err;
    if (len > 0 && data[len - 1] == '\n')
        len--;
    if (a->raw)
        fwrite(data, 1, len, out);
    else
        shoal__client_write_text(out, data, len);
    return 0;
}

/* scale: "SIZE asked N min MIN max MAX[ parked]" (an older shoald: "SIZE"); scale
 * MIN..MAX: "SIZE bounds MIN..MAX from WAS". */
static int scale_body(void *arg, const char *data, size_t len, FILE *out, FILE *err)
{
    const answer_t *a = arg;
    char text[256];
    unsigned size, asked, min, max, was;
    (void)err;
    snprintf(text, sizeof text, "%.*s", (int)(len < sizeof text ? len : sizeof text - 1), data);
    if (sscanf(text, "%u bounds %u..%u from %u", &size, &min, &max, &was) == 4) {
        fprintf(out, "%s: bounds %u..%u, %u worker%s", a->pool, min, max, size,
                size == 1 ? "" : "s");
        if (size != was && (was < min || was > max))
            fprintf(out, " (clamped from %u)", was);
        fputc('\n', out);
        return 0;
    }
    int got = sscanf(text, "%u asked %u min %u max %u", &size, &asked, &min, &max);
    if (got < 1) {
        fwrite(data, 1, len, out);
        return 0;
    }
    fprintf(out, "%s: %u worker%s", a->pool, size, size == 1 ? "" : "s");
    if (got == 4 && strstr(text, " parked") != NULL)
        fprintf(out, " (parked: every send is refused, counted, until it is scaled up; nothing "
                     "else starts a worker -- no autoscale, no idle_timeout)");
    else if (got == 4 && asked > max && size == max)
        fprintf(out, " (asked %u; clamped to max %u)", asked, max);
    else if (got == 4 && asked < min && size == min)
        fprintf(out, " (asked %u; clamped to min %u)", asked, min);
    else if (got == 4 && asked != size)
        fprintf(out, " (asked %u)", asked);
    fputc('\n', out);
    return 0;
}

/* ---- main -------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    const char *path = NULL, *origin = NULL;
    uint64_t timeout = DEFAULT_TIMEOUT_MS;
    bool timeout_given = false;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *o = argv[i];
        if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(o, "--version") == 0) {
            shoal__version_print(stdout, "shoalctl");
            return 0;
        }
        if (strcmp(o, "--socket") != 0 && strcmp(o, "--timeout") != 0)
            return bad(NULL, "unknown option '%s'", o);
        if (i + 1 >= argc)
            return bad(NULL, "%s needs %s", o,
                       strcmp(o, "--socket") == 0 ? "a socket path" : "milliseconds");
        const char *v = argv[++i];
        if (strcmp(o, "--socket") == 0) {
            path = v;
            origin = "from --socket";
        } else if (!millis(v, &timeout)) {
            return bad(NULL, "--timeout %s: expected milliseconds (1 to 86400000)", v);
        } else {
            timeout_given = true;
        }
    }
    if (i >= argc)
        return bad(NULL, "no command (commands: %s)", command_list());
    const cmd_t *cmd = find(argv[i]);
    if (cmd == NULL)
        return bad(NULL, "unknown command '%s' (commands: %s)", argv[i], command_list());
    i++;
    bool is_call = strcmp(cmd->name, "call") == 0, is_send = strcmp(cmd->name, "send") == 0;
    /* The command's own words: options (anywhere, until "--"), then the
     * positional ones. */
    char **pos = argv + i; /* the positional words, moved down in place */
    unsigned npos = 0;
    const char *call_timeout = NULL, *type = NULL;
    unsigned long type_n = 1;
    bool raw = false, options = true;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (options && strcmp(a, "--") == 0) {
            options = false;
            continue;
        }
        if (options && (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)) {
            cmd_usage(stdout, cmd);
            return 0;
        }
        if (options && strncmp(a, "--", 2) == 0 && a[2] != '\0') {
            bool valued = strcmp(a, "--type") == 0 || strcmp(a, "--timeout") == 0;
            if ((is_call || is_send) && strcmp(a, "--type") == 0 && i + 1 < argc) {
                type = argv[++i];
                if (!msg_type(type, &type_n))
                    return bad(cmd, "--type %s: expected a message type (0 to 4294967295)", type);
            } else if (is_call && strcmp(a, "--timeout") == 0 && i + 1 < argc) {
                uint64_t t;
                call_timeout = argv[++i];
                if (!millis(call_timeout, &t) || t > CALL_TIMEOUT_MAX_MS)
                    return bad(cmd, "--timeout %s: expected milliseconds (1 to %d)", call_timeout,
                               CALL_TIMEOUT_MAX_MS);
            } else if (is_call && strcmp(a, "--raw") == 0) {
                raw = true;
            } else if (valued && (is_call || (is_send && strcmp(a, "--type") == 0))) {
                return bad(cmd, "%s needs %s", a,
                           strcmp(a, "--type") == 0 ? "a message type" : "milliseconds");
            } else {
                return bad(cmd, "%s: unknown option '%s'", cmd->name, a);
            }
            continue;
        }
        pos[npos++] = argv[i];
    }
    /* DATA: every word after POOL. */
    bool joined = is_call || is_send || strcmp(cmd->name, "epic") == 0;
    unsigned words = joined && npos > 2 ? 2 : npos;
    if (words < cmd->min)
        return bad(cmd, "%s: missing %s", cmd->name,
                   npos == 0                         ? "POOL"
                   : strcmp(cmd->name, "scale") == 0 ? "N or MIN..MAX"
                                                     : "DATA");
    if (words > cmd->max)
        return bad(cmd, "%s: unexpected argument '%s'", cmd->name, pos[cmd->max]);
    if (strcmp(cmd->name, "help") == 0) {
        const cmd_t *about = npos ? find(pos[0]) : NULL;
        if (npos && about == NULL)
            return bad(NULL, "unknown command '%s' (commands: %s)", pos[0], command_list());
        if (about != NULL)
            cmd_usage(stdout, about);
        else
            usage(stdout);
        return 0;
    }
    if (strcmp(cmd->name, "scale") == 0) { /* N, or MIN..MAX: the words shoald would say */
        uint64_t workers;
        uint32_t min, max;
        char why[200];
        if (!shoal__num_bounds(pos[1], SHOAL_POOL_MAX_SIZE, &min, &max, why, sizeof why) &&
            why[0] != '\0')
            return bad(cmd, "scale: %s", why);
        if (why[0] == '\0' && strstr(pos[1], "..") == NULL &&
            !shoal__num_parse(pos[1], 10, SHOAL_POOL_MAX_SIZE, &workers))
            return bad(cmd,
                       "scale: N must be a number of workers (0 to %u), or MIN..MAX the pool's "
                       "bounds (e.g. 2..16), not '%s'",
                       SHOAL_POOL_MAX_SIZE, pos[1]);
    }
    /* The socket. */
    if (path == NULL && (path = getenv("SHOAL_SOCKET")) != NULL && path[0] != '\0') {
        origin = "from $SHOAL_SOCKET";
    } else if (path == NULL || path[0] == '\0') {
        if (access("shoal.sock", F_OK) == 0) {
            path = "./shoal.sock";
            origin = "found in this directory";
        } else {
            path = SERVICE_SOCKET;
            origin = "the default: no --socket, no $SHOAL_SOCKET, no ./shoal.sock";
        }
    }
    /* The request. */
    static req_t r;
    add(&r, cmd->name);
    if (type != NULL) {
        char t[32];
        snprintf(t, sizeof t, "type=%lu", type_n);
        add(&r, t);
    }
    for (unsigned k = 0; k < npos; k++) {
        const char *arg = pos[k];
        char abs[PATH_MAX];
        if (strcmp(cmd->name, "diff") == 0) {
            /* shoald may run elsewhere: it is sent the file this shell
             * means, or nothing -- a relative name it cannot resolve here
             * would name a file in shoald's own directory. */
            if (realpath(arg, abs) == NULL) {
                fprintf(stderr, "shoalctl: %s: %s\n", arg, strerror(errno));
                return 2;
            }
            arg = abs;
        }
        if (strchr(arg, '\n') != NULL) {
            fprintf(stderr, "shoalctl: arguments cannot contain a newline\n");
            return 2;
        }
        add(&r, arg);
    }
    /* A call always says its timeout: shoald takes a last word that is a
     * number for one, so DATA that ends in a number must not be last. */
    if (is_call)
        add(&r, call_timeout != NULL ? call_timeout : CALL_DEFAULT_TEXT);
    if (r.overflow || r.n + 1 >= sizeof r.buf) {
        fprintf(stderr, "shoalctl: request too long\n");
        return 2;
    }
    r.buf[r.n++] = '\n';
    if (is_call && !timeout_given) {
        uint64_t t = CALL_DEFAULT_MS;
        if (call_timeout != NULL && !millis(call_timeout, &t))
            t = CALL_DEFAULT_MS;
        timeout = t + CALL_MARGIN_MS;
    }
    bool is_reload = strcmp(cmd->name, "reload") == 0;
    bool is_diff = strcmp(cmd->name, "diff") == 0;
    if ((is_reload || is_diff) && !timeout_given) /* plugins it loads: up to 10 s each */
        timeout = RELOAD_TIMEOUT_MS;
    if (!timeout_given && (strcmp(cmd->name, "inspect") == 0 || strcmp(cmd->name, "scale") == 0 ||
                           strcmp(cmd->name, "epic") == 0))
        timeout = ACTOR_JOB_TIMEOUT_MS;
    answer_t ans = {.pool = npos ? pos[0] : "", .raw = raw};
    shoal_client_t cl = {.path = path,
                         .origin = origin,
                         .prog = "shoalctl",
                         .timeout_ms = timeout,
                         .late = is_reload ? "; the reload goes on there: its outcome will be in "
                                             "shoald's log (`reload: generation N` or `reload "
                                             "failed`) and in `shoalctl status`"
                                 : is_diff ? "; the diff goes on there, changing nothing, "
                                             "unanswered (`shoalctl status` says while it runs)"
                                           : NULL,
                         .out = stdout,
                         .err = stderr,
                         .body = is_call                           ? call_body
                                 : strcmp(cmd->name, "scale") == 0 ? scale_body
                                                                   : NULL,
                         .arg = &ans};
    return shoal__client_exchange(&cl, r.buf, r.n);
}
