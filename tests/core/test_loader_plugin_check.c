/* test_loader_plugin_check.c - shoal-plugin-check run on the fixtures: its
 * exit status (0 good, 1 a handler that fails or panics, 2 refused) and
 * --describe's output, the plugin and each behaviour's args schema one
 * aligned row per key, or the loader's reason for a refusal. */
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loader_kit.h"

#ifndef SHOAL_PLUGIN_CHECK
#error "SHOAL_PLUGIN_CHECK must name the shoal-plugin-check binary"
#endif

extern char **environ;

/* ---- shoal-plugin-check ----------------------------------------------------- */

/* Runs shoal-plugin-check on a fixture, after `option` if not NULL; returns
 * its exit status (-1 when it did not exit). Its output (stdout and stderr)
 * goes to a file, shown when want is not met, and into got when not NULL. */
static int plugin_check_output(const char *option, const char *name, int want, char *got,
                               size_t got_size)
{
    char out[] = "/tmp/shoal-test-check-XXXXXX";
    int fd = mkstemp(out);
    CU_ASSERT_FATAL(fd >= 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd, 1);
    posix_spawn_file_actions_adddup2(&fa, fd, 2);
    char *argv[] = {(char *)SHOAL_PLUGIN_CHECK, (char *)(option ? option : lk_fixture(name)),
                    option ? (char *)lk_fixture(name) : NULL, NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, SHOAL_PLUGIN_CHECK, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    int status = 0;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code != want) {
        fprintf(stderr, "\n    shoal-plugin-check %s: exit %d (status %#x), want %d; output:\n",
                name, code, status, want);
        FILE *f = fopen(out, "r");
        char line[512];
        while (f != NULL && fgets(line, sizeof line, f))
            fprintf(stderr, "      | %s", line);
        if (f != NULL)
            fclose(f);
    }
    if (got != NULL) {
        FILE *f = fopen(out, "r");
        size_t n = f != NULL ? fread(got, 1, got_size - 1, f) : 0;
        got[n] = '\0';
        if (f != NULL)
            fclose(f);
    }
    unlink(out);
    return code;
}

static int plugin_check(const char *name, int want)
{
    return plugin_check_output(NULL, name, want, NULL, 0);
}

static void test_plugin_check(void)
{
    CU_ASSERT_EQUAL(plugin_check("good.so", 0), 0);
    CU_ASSERT_EQUAL(plugin_check("handler_panic.so", 1), 1);
    CU_ASSERT_EQUAL(plugin_check("handler_error.so", 1), 1);
    CU_ASSERT_EQUAL(plugin_check("abi_major.so", 2), 2);
    CU_ASSERT_EQUAL(plugin_check("does_not_exist.so", 2), 2);
}

/* shoal-plugin-check --describe on fixture `name` exits with `code` and
 * prints what the format `want` and its arguments say (shown beside what it
 * printed when not). */
__attribute__((format(printf, 3, 4))) static void describes_as(const char *name, int code,
                                                               const char *want, ...)
{
    char got[4096], text[4096];
    va_list ap;
    va_start(ap, want);
    vsnprintf(text, sizeof text, want, ap);
    va_end(ap);
    CU_ASSERT_EQUAL(plugin_check_output("--describe", name, code, got, sizeof got), code);
    CU_ASSERT_STRING_EQUAL(got, text);
    if (strcmp(got, text) != 0)
        fprintf(stderr, "\n    got:\n%s    want:\n%s", got, text);
}

/* --describe prints the plugin and each behaviour's args schema, one
 * aligned row per key; exit 0, or 2 when the plugin is refused (a malformed
 * schema included), with the loader's reason. */
static void test_plugin_check_describe(void)
{
    describes_as(
        "fault.so", 0,
        "plugin fault 1.0.0 (ABI %d.%d) from %s\n"
        "  fault.fault\n"
        "    mode      enum      default ok     ok | segv | abort | loop | sleep | leak | fail | "
        "panic | overflow | fork  what a faulty message does\n"
        "    every     integer   default 1      >= 1                                               "
        "                       fault on every N-th message this worker handles\n"
        "    ms        duration  default 0                                                         "
        "                       for loop, sleep and fork; 0 = for ever (fork: 60 s)\n"
        "    bytes     size      default 1MiB                                                      "
        "                       for leak\n"
        "    record    string    optional                                                          "
        "                       a file each normally handled message appends its sequence number "
        "to\n"
        "    init      enum      default ok     ok | fail | stop | stall                           "
        "                       fail: init returns SHOAL_EINVAL; stop: init sends SIGTERM to its "
        "process, then sleeps ms; stall: init sends itself `sends` priority messages\n"
        "    announce  bool      default false                                                     "
        "                       true: init logs \"fault: ready\" (a test learns the worker's PID)\n"
        "    chatter   bool      default false                                                     "
        "                       true: every message logs \"fault: a message of N bytes\"\n"
        "    sends     integer   default 1      1..1000                                            "
        "                       for init: stall, how many messages\n",
        SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR, lk_fixture("fault.so"));

    /* No schema: an ABI 1.2 plugin (junk where 1.3 has args), and a 1.3 one
     * that declares none. */
    describes_as("abi_1_2.so", 0,
                 "plugin abi12 1.2 (ABI %d.2) from %s\n"
                 "  abi12.old  (args not declared: not checked)\n",
                 SHOAL_ABI_MAJOR, lk_fixture("abi_1_2.so"));
    describes_as("good.so", 0,
                 "plugin good 1.2.3 (ABI %d.%d) from %s\n"
                 "  good.alpha  (args not declared: not checked)\n"
                 "  good.beta  (args not declared: not checked)\n",
                 SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR, lk_fixture("good.so"));

    /* Refused: exit 2, the reason on stderr. */
    describes_as("schema_range.so", 2,
                 "shoal-plugin-check: %s: plugin refused: behaviour 'bad.args' arg 'rate': range "
                 "10..1 has min above max\n",
                 lk_fixture("schema_range.so"));
    CU_ASSERT_EQUAL(plugin_check_output("--describe", "abi_major.so", 2, NULL, 0), 2);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"shoal-plugin-check", test_plugin_check},
        {"shoal-plugin-check --describe", test_plugin_check_describe},
        {NULL, NULL},
    };
    return lk_run("loader_plugin_check", cases);
}
