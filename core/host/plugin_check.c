/* plugin_check.c - shoal-plugin-check: loads a plugin the way shoald does and
 * runs each of its behaviours through init -> messages -> a call -> stop
 * under a real runtime (debug checks on), reporting what fails.
 *
 *   shoal-plugin-check [--args YAML] [--messages N] [--timeout MS] FILE.so
 *   shoal-plugin-check --describe FILE.so
 *   shoal-plugin-check --version | --help
 *
 * --describe loads the plugin (the loader's checks, its schemas' included)
 * and prints each behaviour's args schema instead of running anything.
 * Without it, --args is first checked against each behaviour's schema, as
 * shoald --check checks a pool's args: a mistake is a failed check.
 *
 * Exit status: 0 every behaviour passed (or described), 1 a check failed,
 * 2 usage or the plugin was refused. A plugin that crashes the checker
 * (SIGSEGV, abort()) gets the report shoald would write (runtime/fault.h) on
 * stderr, and the checker dies of that signal.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host/argcheck.h"
#include "host/loader.h"
#include "host/version.h"
#include "host/node.h"
#include "runtime/fault.h"
#include "shoal/shoal.h"

#define MSG_TYPE_BASE 0x7100u

/* The harness: parent of the actor under test, so it hears how it ended. */
/* The harness actor writes reason, then exited [seq_cst: atomic_store];
 * the checking thread reads exited, then reason [seq_cst: atomic_load]:
 * a reader that sees exited sees the reason stored before it. The pair
 * needs only release/acquire; sem_post/sem_wait order them too. */
typedef struct harness_s {
    sem_t ended;
    _Atomic int reason;
    _Atomic int exited;
} harness_t;

static harness_t H;

static int harness_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    if (msg->kind == SHOAL_MSG_EXIT) {
        /* seq_cst (both): pairs with the checker's load of exited, then of
         * reason (harness_t). */
        atomic_store(&H.reason, msg->status);
        atomic_store(&H.exited, 1);
        sem_post(&H.ended);
    }
    return 0;
}

static const shoal_behaviour_t harness = {.name = "harness", .handle_message = harness_message};

static void log_line(void *user, int level, const char *line)
{
    (void)user;
    (void)level;
    printf("      log: %s\n", line);
    fflush(stdout);
}

static int wait_exit(double seconds)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)seconds;
    ts.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    return sem_timedwait(&H.ended, &ts) == 0;
}

static int failures;

static void check(int ok, const char *what, const char *detail)
{
    printf("    %s %s%s%s\n", ok ? "ok  " : "FAIL", what, detail && *detail ? ": " : "",
           detail ? detail : "");
    if (!ok)
        failures++;
}

/* Runs one behaviour; returns after the actor ended. */
static void run_behaviour(shoal_runtime_t *rt, shoal_module_t *m, const shoal_behaviour_t *b,
                          const shoal_node_t *args, unsigned nmsg, uint64_t timeout_ms)
{
    char detail[256];
    printf("  behaviour %s.%s\n", shoal__module_plugin(m)->name, b->name);
    /* --args against the behaviour's schema, as shoald --check would: a
     * mistake there is a failed check (init then runs all the same). */
    char worker[160];
    snprintf(worker, sizeof worker, "%s.%s", shoal__module_plugin(m)->name, b->name);
    shoal_diag_t argerr = {0};
    char text[1200];
    if (b->args == NULL)
        check(1, "args", "no schema: unchecked");
    else if (shoal__argcheck_args(b->args, args, args, NULL, worker, &argerr) == SHOAL_OK)
        check(1, "args", "as the schema says");
    else
        check(0, "args", shoal__diag_format(&argerr, text, sizeof text));
    atomic_store(&H.exited, 0);
    shoal_pid_t parent, pid;
    int rc = shoal_runtime_spawn(rt, &harness, NULL, NULL, &parent);
    if (rc == SHOAL_OK)
        rc = shoal__module_spawn(rt, m, parent, b, args, 64, &pid);
    check(rc == SHOAL_OK, "spawn", rc ? shoal_strerror(rc) : "");
    if (rc != SHOAL_OK)
        return;

    /* Messages of several shapes: empty, inline, heap-sized. */
    static unsigned char big[4096];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (unsigned char)i;
    unsigned sent = 0, refused = 0;
    for (unsigned i = 0; i < nmsg; i++) {
        uint64_t v = i;
        const void *data = i % 3 == 0 ? NULL : i % 3 == 1 ? (const void *)&v : (const void *)big;
        size_t size = i % 3 == 0 ? 0 : i % 3 == 1 ? sizeof v : sizeof big;
        rc = shoal_runtime_send(rt, pid, MSG_TYPE_BASE + i % 3, data, size);
        if (rc == SHOAL_OK)
            sent++;
        else if (rc == SHOAL_EFULL)
            refused++;
        else
            break;
    }
    snprintf(detail, sizeof detail, "%u accepted, %u refused as full%s%s", sent, refused,
             rc != SHOAL_OK && rc != SHOAL_EFULL ? ", then " : "",
             rc != SHOAL_OK && rc != SHOAL_EFULL ? shoal_strerror(rc) : "");
    check(rc == SHOAL_OK || rc == SHOAL_EFULL, "messages", detail);

    /* A call: answered (or SHOAL_ENOTSUP without handle_call), in time. */
    shoal_answer_t ans;
    uint64_t v = 42;
    rc = shoal_runtime_call(rt, pid, MSG_TYPE_BASE + 9, &v, sizeof v, timeout_ms, &ans);
    if (rc == SHOAL_OK) {
        snprintf(detail, sizeof detail, "reply type %" PRIu32 ", %zu bytes, status %s", ans.type,
                 ans.size, shoal_errname(ans.status));
        check(ans.status == SHOAL_OK || (b->handle_call == NULL && ans.status == SHOAL_ENOTSUP),
              "call", detail);
        shoal_answer_release(&ans);
    } else {
        snprintf(detail, sizeof detail, "%s%s", shoal_strerror(rc),
                 atomic_load(&H.exited) ? " (the actor had already ended)" : "");
        check(0, "call", detail);
    }

    /* An actor that answered "no such actor" has ended, or is ending: give
     * its exit notice time to reach the harness before judging. */
    if (rc == SHOAL_OK && ans.status == SHOAL_ENOPROC && !atomic_load(&H.exited)) {
        for (int i = 0; i < 1000 && !atomic_load(&H.exited); i++)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    if (atomic_load(&H.exited)) {
        int why = atomic_load(&H.reason);
        snprintf(detail, sizeof detail, "ended on its own with %s (%d): see the log above",
                 shoal_errname(why), why);
        check(0, "alive after init, messages and a call", detail);
        shoal_runtime_stop_actor(rt, parent);
        wait_exit(0); /* take the exit notice already posted */
        return;
    }
    check(1, "alive after init, messages and a call", "");

    /* Inspect: answered (through the system mailbox) with a JSON object. */
    rc = shoal_runtime_inspect(rt, pid, timeout_ms, &ans);
    if (rc == SHOAL_OK && ans.status == SHOAL_OK) {
        printf("      inspect: %s\n", (const char *)ans.data);
        check(((const char *)ans.data)[0] == '{', "inspect", "");
    } else {
        snprintf(detail, sizeof detail, "%s", shoal_errname(rc != SHOAL_OK ? rc : ans.status));
        check(0, "inspect", detail);
    }
    if (rc == SHOAL_OK)
        shoal_answer_release(&ans);

    /* Stop: terminate runs, the actor ends with SHOAL_ESHUTDOWN. */
    if (!atomic_load(&H.exited))
        shoal_runtime_stop_actor(rt, pid);
    int ended = wait_exit((double)timeout_ms / 1000.0 + 1.0);
    int reason = atomic_load(&H.reason);
    snprintf(detail, sizeof detail, "%s (%d)", ended ? shoal_errname(reason) : "did not end",
             reason);
    check(ended && reason == SHOAL_ESHUTDOWN, "stop", detail);
    shoal_runtime_stop_actor(rt, parent);
}

static void usage(FILE *to)
{
    fprintf(to, "usage: shoal-plugin-check [--args YAML] [--messages N] [--timeout MS] FILE.so\n"
                "       shoal-plugin-check --describe FILE.so\n"
                "       shoal-plugin-check --version | --help\n"
                "  FILE.so         load the plugin as shoald does and run each behaviour\n"
                "                  through init, N messages, a call and stop\n"
                "  --args YAML     the args every behaviour gets (a YAML flow map; default {})\n"
                "  --messages N    messages sent to each behaviour (default 9)\n"
                "  --timeout MS    how long each step may take (default 2000)\n"
                "  --describe      print each behaviour's args schema, run nothing\n"
                "  --version       print the version and exit\n"
                "exit status: 0 every behaviour passed, 1 a check failed, 2 usage or the plugin\n"
                "  was refused\n");
}

/* A usage error (version.h): what is wrong, a hint; exit status 2. */
static int bad(const char *fmt, const char *what)
{
    return shoal__usage_error("shoal-plugin-check", fmt, what);
}

/* A whole decimal number in [1, max]. */
static bool number(const char *s, unsigned long long max, unsigned long long *out)
{
    char *end;
    if (s == NULL || *s < '0' || *s > '9')
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end != '\0' || errno != 0 || v == 0 || v > max)
        return false;
    *out = v;
    return true;
}

/* --describe: load, print the schemas, unload. */
static int describe(const char *path)
{
    char buf[1200];
    shoal_diag_t err;
    shoal_loader_t *loader;
    shoal_module_t *m;
    if (shoal__loader_create(&loader) != SHOAL_OK)
        return 2;
    int rc = shoal__module_load(loader, path, &m, &err);
    if (rc == SHOAL_OK) {
        shoal__argcheck_describe(stdout, m, NULL);
        shoal__module_release(m);
    } else {
        fprintf(stderr, "shoal-plugin-check: %s\n", shoal__diag_format(&err, buf, sizeof buf));
    }
    shoal__loader_destroy(loader);
    return rc == SHOAL_OK ? 0 : 2;
}

int main(int argc, char **argv)
{
    const char *yaml = "{}", *path = NULL;
    unsigned nmsg = 9;
    uint64_t timeout_ms = 2000;
    bool describe_only = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool valued =
            strcmp(a, "--args") == 0 || strcmp(a, "--messages") == 0 || strcmp(a, "--timeout") == 0;
        unsigned long long v;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            shoal__version_print(stdout, "shoal-plugin-check");
            return 0;
        } else if (valued && i + 1 >= argc) {
            return bad("%s needs a value", a);
        } else if (strcmp(a, "--args") == 0) {
            yaml = argv[++i];
        } else if (strcmp(a, "--messages") == 0) {
            if (!number(argv[++i], 1000000, &v))
                return bad("--messages %s: expected a number of messages (1 to 1000000)", argv[i]);
            nmsg = (unsigned)v;
        } else if (strcmp(a, "--timeout") == 0) {
            if (!number(argv[++i], 3600000, &v))
                return bad("--timeout %s: expected milliseconds (1 to 3600000)", argv[i]);
            timeout_ms = v;
        } else if (strcmp(a, "--describe") == 0) {
            describe_only = true;
        } else if (a[0] == '-' && a[1] != '\0') {
            return bad("unknown option '%s'", a);
        } else if (path != NULL) {
            return bad("unexpected argument '%s' (one FILE.so only)", a);
        } else {
            path = a;
        }
    }
    if (path == NULL)
        return bad("%s", "no FILE.so: name the plugin to check");
    if (describe_only)
        return describe(path);
    /* Before the plugin is loaded: its init runs then. Each step's line is
     * out before a crash report follows it, into a pipe too. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    shoal__fault_thread_start(NULL, "the checker's main thread");
    int frc = shoal__fault_install(STDERR_FILENO, SHOAL_FAULT_TEXT);
    if (frc != 0)
        fprintf(stderr, "shoal-plugin-check: warning: no crash reports: %s\n", strerror(-frc));

    char buf[1200];
    shoal_diag_t err;
    shoal_node_t *args = NULL;
    if (shoal__node_parse("--args", yaml, strlen(yaml), &args, &err) != SHOAL_OK) {
        fprintf(stderr, "shoal-plugin-check: %s\n", shoal__diag_format(&err, buf, sizeof buf));
        return 2;
    }
    shoal_loader_t *loader;
    shoal_module_t *m;
    if (shoal__loader_create(&loader) != SHOAL_OK)
        return 2;
    int rc = shoal__module_load(loader, path, &m, &err);
    if (rc != SHOAL_OK) {
        fprintf(stderr, "shoal-plugin-check: %s\n", shoal__diag_format(&err, buf, sizeof buf));
        shoal__loader_destroy(loader);
        shoal__node_free(args);
        return 2;
    }
    const shoal_plugin_t *d = shoal__module_plugin(m);
    printf("plugin %s %s (ABI %u.%u, descriptor %u bytes) from %s\n", d->name,
           d->version ? d->version : "?", d->abi_major, d->abi_minor, d->size, path);
    for (size_t i = 0; i < shoal__module_behaviour_count(m); i++) {
        const shoal_behaviour_t *b = shoal__module_behaviour_at(m, i);
        printf("  %s.%s: state %zu bytes;%s%s%s%s%s\n", d->name, b->name, b->state_size,
               b->init ? " init" : "", " handle_message", b->handle_call ? " handle_call" : "",
               b->terminate ? " terminate" : "", b->inspect ? " inspect" : "");
    }

    shoal_runtime_opts_t o;
    shoal_runtime_opts_init(&o);
    o.threads = 2;
    o.debug_checks = 1;
    o.log_level = SHOAL_LOG_INFO;
    o.log_fn = log_line;
    shoal_runtime_t *rt;
    if (shoal_runtime_create(&rt, &o) != SHOAL_OK)
        return 2;
    sem_init(&H.ended, 0, 0);
    for (size_t i = 0; i < shoal__module_behaviour_count(m); i++)
        run_behaviour(rt, m, shoal__module_behaviour_at(m, i), args, nmsg, timeout_ms);
    shoal_runtime_destroy(rt);
    shoal__module_release(m);
    shoal__loader_destroy(loader);
    shoal__node_free(args);
    sem_destroy(&H.ended);
    printf("%s: %d check%s failed\n", failures ? "FAILED" : "passed", failures,
           failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
