/* test_loader_refusals.c - plugins the loader (host/loader.c) refuses, with
 * the fixtures in tests/fixtures/plugins: every refusal with its whole
 * message, in the order the loader checks -- no such file, not a regular
 * file, not an ELF file, not a shared object, a huge file (neither copied),
 * too large, no descriptor symbol, bad
 * names, no behaviours, no handle_message, duplicate behaviours, a dlopen
 * error, a plugin init that fails -- and malformed args schemas; nothing
 * stays loaded or mapped. The refusals of the ABI fields are
 * test_loader_abi's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "loader_kit.h"

/* ---- refusals ------------------------------------------------------------- */

static void test_missing_file(void)
{
    lk_assert_refused(lk_fixture("does_not_exist.so"), "no such file");
}

static void test_not_a_regular_file(void)
{
    lk_assert_refused(lk_fixture(""), "not a shared object (not a regular file)");
}

static void test_not_elf(void)
{
    lk_assert_refused(lk_fixture("not_elf.so"), "not a shared object (not an ELF file)");
    /* An empty file too. */
    char path[] = "/tmp/shoal-test-empty-XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    lk_assert_refused(path, "not a shared object (not an ELF file)");
    unlink(path);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A huge file is refused before it is copied: by its header (a 1 GiB
 * sparse file that is not ELF was copied whole first: 4 s), or, an ELF
 * .so's header, by its size. */
static void test_huge_file(void)
{
    char path[] = "/tmp/shoal-test-huge-XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL_FATAL(ftruncate(fd, (off_t)1 << 30), 0);
    double t0 = now_s();
    lk_assert_refused(path, "not a shared object (not an ELF file)");
    CU_ASSERT(now_s() - t0 < 1.0);
    /* good.so's first bytes (its ELF header), then nothing up to 300 MiB */
    char head[64];
    FILE *g = fopen(lk_fixture("good.so"), "rb");
    CU_ASSERT_FATAL(g != NULL && fread(head, 1, sizeof head, g) == sizeof head);
    fclose(g);
    CU_ASSERT_EQUAL_FATAL(ftruncate(fd, 0), 0);
    CU_ASSERT_EQUAL_FATAL(pwrite(fd, head, sizeof head, 0), (ssize_t)sizeof head);
    CU_ASSERT_EQUAL_FATAL(ftruncate(fd, (off_t)300 << 20), 0);
    t0 = now_s();
    lk_assert_refused(path, "too large: 314572800 bytes, past the 256 MiB a plugin may be");
    CU_ASSERT(now_s() - t0 < 1.0);
    /* At the bound: past the size check (refused further on, by its
     * section table). */
    CU_ASSERT_EQUAL_FATAL(ftruncate(fd, (off_t)SHOAL_PLUGIN_MAX_SIZE), 0);
    shoal_loader_t *L = NULL;
    CU_ASSERT_FATAL(shoal__loader_create(&L) == SHOAL_OK);
    shoal_module_t *m = NULL;
    shoal_diag_t err;
    char msg[600];
    CU_ASSERT_EQUAL(shoal__module_load(L, path, &m, &err), SHOAL_ELOAD);
    CU_ASSERT_PTR_NULL(strstr(shoal__diag_format(&err, msg, sizeof msg), "too large"));
    shoal__loader_destroy(L);
    close(fd);
    unlink(path);
}

static void test_elf_not_shared(void)
{
    lk_assert_refused(lk_fixture("not_shared.o"),
                      "not a shared object (an ELF file, but not a 64-bit .so)");
}

static void test_no_descriptor_symbol(void)
{
    lk_assert_refused(lk_fixture("no_symbol.so"),
                      "no 'shoal_plugin' symbol: export a descriptor with "
                      "SHOAL_PLUGIN() from <shoal/plugin.h>");
}

static void test_bad_names(void)
{
    lk_assert_refused(lk_fixture("bad_name.so"),
                      "plugin name 'Bad.Name' must be 1-64 of [a-z0-9_-]");
    lk_assert_refused(lk_fixture("bad_behaviour_name.so"),
                      "behaviour 1 of plugin 'badbeh': name 'Upper' must be 1-64 of [a-z0-9_-]");
}

static void test_no_behaviours(void)
{
    lk_assert_refused(lk_fixture("no_behaviours.so"), "plugin 'empty' declares no behaviours");
}

static void test_no_handle_message(void)
{
    lk_assert_refused(lk_fixture("no_handler.so"),
                      "behaviour 'nohandler.lazy' has no handle_message");
}

static void test_duplicate_behaviours(void)
{
    lk_assert_refused(lk_fixture("dup_behaviour.so"),
                      "plugin 'dup' has two behaviours named 'twin'");
}

static void test_dlopen_error(void)
{
    const char *path = lk_fixture("undefined_symbol.so");
    shoal_loader_t *L = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    shoal_module_t *m = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL(shoal__module_load(L, path, &m, &err), SHOAL_ELOAD);
    char got[1200], head[1200];
    shoal__diag_format(&err, got, sizeof got);
    snprintf(head, sizeof head, "%s: plugin refused: dlopen: ", path);
    CU_ASSERT_NSTRING_EQUAL(got, head, strlen(head));
    CU_ASSERT_PTR_NOT_NULL(strstr(got, "undefined symbol: fixture_undefined_function"));
    CU_ASSERT(!lk_mapped(path));
    shoal__loader_destroy(L);
}

/* The plugin's init refuses: the reason and the code are in the message.
 * Run in a child process: a loader that crashes here must not take the
 * whole suite down with it. */
static void test_init_fails(void)
{
    const char *path = lk_fixture("init_fails.so");
    int fds[2];
    CU_ASSERT_EQUAL_FATAL(pipe(fds), 0);
    fflush(NULL);
    pid_t child = fork();
    CU_ASSERT_FATAL(child >= 0);
    if (child == 0) {
        close(fds[0]);
        shoal_loader_t *L = NULL;
        shoal_module_t *m = NULL;
        shoal_diag_t err;
        char out[1300];
        if (shoal__loader_create(&L) != SHOAL_OK)
            _exit(3);
        int rc = shoal__module_load(L, path, &m, &err);
        char msg[1200];
        int n = snprintf(out, sizeof out, "%d %u %d|%s", rc, shoal__loader_count(L),
                         (int)lk_mapped(path), shoal__diag_format(&err, msg, sizeof msg));
        if (write(fds[1], out, (size_t)n) != n)
            _exit(4);
        _exit(0);
    }
    close(fds[1]);
    char got[1300] = "";
    size_t len = 0;
    ssize_t r;
    while ((r = read(fds[0], got + len, sizeof got - 1 - len)) > 0)
        len += (size_t)r;
    got[len] = '\0';
    close(fds[0]);
    int status = 0;
    CU_ASSERT_EQUAL(waitpid(child, &status, 0), child);
    if (WIFSIGNALED(status))
        fprintf(stderr, "\n    loading init_fails.so killed the process with signal %d\n",
                WTERMSIG(status));
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char want[1300];
    snprintf(want, sizeof want,
             "%d 0 0|%s: plugin refused: init of plugin 'initfails' failed (7): database is down",
             SHOAL_ELOAD, path);
    CU_ASSERT_STRING_EQUAL(got, want);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "\n    got:  %s\n    want: %s\n", got, want);
}

/* A malformed args schema refuses the plugin, naming the behaviour and the
 * key (the checks themselves are test_argcheck's). */
static void test_malformed_schemas(void)
{
    lk_assert_refused(lk_fixture("schema_key.so"),
                      "behaviour 'bad.args' arg 1: key 'max-size' is not an identifier "
                      "([A-Za-z_][A-Za-z0-9_]*, at most 64)");
    lk_assert_refused(lk_fixture("schema_dup.so"), "behaviour 'bad.args' has two args named 'ok'");
    lk_assert_refused(lk_fixture("schema_type.so"),
                      "behaviour 'bad.args' arg 'rate': unknown type 99");
    lk_assert_refused(lk_fixture("schema_enum.so"),
                      "behaviour 'bad.args' arg 'mode': an enum needs choices (a NULL-terminated "
                      "list)");
    lk_assert_refused(lk_fixture("schema_range.so"),
                      "behaviour 'bad.args' arg 'rate': range 10..1 has min above max");
    lk_assert_refused(lk_fixture("schema_default.so"),
                      "behaviour 'bad.args' arg 'rate': default 'fast' is not valid: expected an "
                      "integer, got 'fast'");
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"missing file", test_missing_file},
        {"not a regular file", test_not_a_regular_file},
        {"not an ELF file", test_not_elf},
        {"a huge file, refused before it is copied", test_huge_file},
        {"ELF but not a shared object", test_elf_not_shared},
        {"no descriptor symbol", test_no_descriptor_symbol},
        {"bad names", test_bad_names},
        {"no behaviours", test_no_behaviours},
        {"no handle_message", test_no_handle_message},
        {"duplicate behaviours", test_duplicate_behaviours},
        {"dlopen error", test_dlopen_error},
        {"plugin init fails", test_init_fails},
        {"malformed args schemas are refused", test_malformed_schemas},
        {NULL, NULL},
    };
    return lk_run("loader_refusals", cases);
}
