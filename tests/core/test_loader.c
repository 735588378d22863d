/* test_loader.c - loading plugins (host/loader.c) with the fixtures in
 * tests/fixtures/plugins: every refusal with its whole message, in the order
 * the loader checks; good.so's descriptor and behaviours; one module per
 * file; a module kept mapped while any actor spawned from it lives and closed
 * when the last one ends (seen in /proc/self/maps); 1,000 load/unload cycles
 * leaving the maps at their baseline; handlers that fail or panic; malformed
 * args schemas refused and an ABI 1.2 plugin read without one; and
 * shoal-plugin-check's exit status and --describe output.
 *
 * good.so's plugin init and fini append "init"/"fini" lines to the file named
 * by SHOAL_FIXTURE_GOOD_LOG, set once in main before any thread starts. */
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host/args.h"
#include "host/loader.h"
#include "host/node.h"
#include "support.h"

#ifndef SHOAL_FIXTURE_DIR
#error "SHOAL_FIXTURE_DIR must name the directory of the built fixtures"
#endif
#ifndef SHOAL_PLUGIN_CHECK
#error "SHOAL_PLUGIN_CHECK must name the shoal-plugin-check binary"
#endif

extern char **environ;

#define GOOD_MSG_TYPE 0x600du

/* ---- helpers: paths, messages ------------------------------------------- */

/* The fixture's absolute path (as /proc/self/maps would show it). */
static const char *fixture(const char *name)
{
    static char paths[8][PATH_MAX];
    static unsigned next;
    char *p = paths[next++ % 8];
    char raw[PATH_MAX];
    snprintf(raw, sizeof raw, "%s/%s", SHOAL_FIXTURE_DIR, name);
    if (realpath(raw, p) == NULL)
        snprintf(p, PATH_MAX, "%s", raw); /* missing files keep their name */
    return p;
}

static char good_log[64];

static void good_log_reset(void)
{
    int fd = open(good_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    CU_ASSERT(fd >= 0);
    if (fd >= 0)
        close(fd);
}

/* Lines of good.so's init/fini log equal to what ("init" or "fini"). */
static int good_log_count(const char *what)
{
    FILE *f = fopen(good_log, "r");
    if (f == NULL)
        return -1;
    char line[64];
    int n = 0;
    size_t len = strlen(what);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, what, len) == 0 && line[len] == '\n')
            n++;
    fclose(f);
    return n;
}

/* ---- helpers: /proc/self/maps --------------------------------------------- */

/* Whether a mapping of the file at path exists. */
static bool mapped(const char *path)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL)
        return false;
    char line[PATH_MAX + 256];
    bool found = false;
    size_t len = strlen(path);
    while (!found && fgets(line, sizeof line, f)) {
        char *slash = strchr(line, '/');
        found = slash != NULL && strncmp(slash, path, len) == 0 && slash[len] == '\n';
    }
    fclose(f);
    return found;
}

/* The inode of a module's private copy (the memfd its code is mapped from). */
static ino_t copy_ino(const shoal_module_t *m)
{
    struct stat st;
    return fstat(shoal__module_fd(m), &st) == 0 ? st.st_ino : 0;
}

/* Whether the private copy with this inode is mapped: a "/memfd:shoal:..."
 * line of /proc/self/maps with that inode. */
static bool copy_mapped(ino_t ino)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL)
        return false;
    char line[PATH_MAX + 256];
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long long i;
        char name[PATH_MAX];
        found = sscanf(line, "%*s %*s %*s %*s %llu %4095s", &i, name) == 2 && i == ino &&
                strncmp(name, "/memfd:shoal:", 13) == 0;
    }
    fclose(f);
    return found;
}

/* Whether any private copy of a file with this base name is mapped. */
static bool any_copy_mapped(const char *base)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL)
        return false;
    char line[PATH_MAX + 256], want[PATH_MAX];
    snprintf(want, sizeof want, "/memfd:shoal:%s ", base);
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, want) != NULL;
    fclose(f);
    return found;
}

/* Open file descriptors of this process. */
static unsigned open_fds(void)
{
    unsigned n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return 0;
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    return n;
}

static bool wait_unmapped(ino_t ino, double timeout_s)
{
    double end = shoal_test_now() + timeout_s;
    while (copy_mapped(ino) && shoal_test_now() < end) {
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    return !copy_mapped(ino);
}

/* What the maps hold: the number of lines, and the sorted distinct paths of
 * the mapped files. */
typedef struct maps_s {
    char raw[256 * 1024]; /* the whole text, for a report when they differ */
    unsigned lines;
    unsigned file_lines; /* lines that map a file */
    unsigned npaths;
    char *paths[512];
} maps_t;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void maps_read(maps_t *m)
{
    memset(m, 0, sizeof *m);
    FILE *f = fopen("/proc/self/maps", "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char line[PATH_MAX + 256];
    size_t used = 0;
    while (fgets(line, sizeof line, f)) {
        m->lines++;
        if (used + strlen(line) < sizeof m->raw) {
            memcpy(m->raw + used, line, strlen(line) + 1);
            used += strlen(line);
        }
        char *slash = strchr(line, '/');
        if (slash == NULL)
            continue;
        m->file_lines++;
        slash[strcspn(slash, "\n")] = '\0';
        bool seen = false;
        for (unsigned i = 0; i < m->npaths && !seen; i++)
            seen = strcmp(m->paths[i], slash) == 0;
        if (!seen && m->npaths < 512)
            m->paths[m->npaths++] = strdup(slash);
    }
    fclose(f);
    qsort(m->paths, m->npaths, sizeof m->paths[0], cmp_str);
}

/* Prints the lines of one snapshot missing from the other. */
static void maps_diff(const maps_t *before, const maps_t *after)
{
    const maps_t *side[2] = {before, after};
    for (int k = 0; k < 2; k++) {
        const char *p = side[k]->raw;
        while (*p) {
            const char *nl = strchr(p, '\n');
            size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
            char line[PATH_MAX + 256];
            snprintf(line, sizeof line, "%.*s", (int)len, p);
            if (strstr(side[1 - k]->raw, line) == NULL)
                fprintf(stderr, "    only %s: %s", k == 0 ? "before" : "after ", line);
            p += len;
        }
    }
}

static void maps_free(maps_t *m)
{
    for (unsigned i = 0; i < m->npaths; i++)
        free(m->paths[i]);
}

/* ---- helpers: the ELF note, read here independently of the loader --------- */

/* Finds the shoal note in the file; true with *note filled when present.
 * Used to show each fixture is what it claims to be. */
static bool elf_note(const char *path, shoal_plugin_note_t *note)
{
    bool found = false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    Elf64_Ehdr eh;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh)
        goto done;
    for (unsigned i = 0; i < eh.e_shnum && !found; i++) {
        Elf64_Shdr sh;
        if (pread(fd, &sh, sizeof sh, (off_t)(eh.e_shoff + i * sizeof sh)) != (ssize_t)sizeof sh)
            goto done;
        if (sh.sh_type != SHT_NOTE)
            continue;
        unsigned char buf[4096];
        size_t size = sh.sh_size < sizeof buf ? sh.sh_size : sizeof buf;
        if (pread(fd, buf, size, (off_t)sh.sh_offset) != (ssize_t)size)
            goto done;
        for (size_t off = 0; off + sizeof(Elf64_Nhdr) <= size;) {
            Elf64_Nhdr nh;
            memcpy(&nh, buf + off, sizeof nh);
            size_t name_at = off + sizeof nh, desc_at = name_at + ((nh.n_namesz + 3u) & ~3u);
            if (desc_at + nh.n_descsz > size)
                break;
            if (nh.n_type == SHOAL_NOTE_TYPE && strcmp((char *)buf + name_at, "shoal") == 0 &&
                nh.n_descsz == sizeof *note) {
                memcpy(note, buf + desc_at, sizeof *note);
                found = true;
                break;
            }
            off = desc_at + ((nh.n_descsz + 3u) & ~3u);
        }
    }
done:
    close(fd);
    return found;
}

/* ---- helpers: a runtime that keeps its log, and a parent that records ----- */

static shoal_runtime_t *runtime(void)
{
    shoal_runtime_t *rt = shoal_test_runtime_logged(2, SHOAL_LOG_WARN);
    CU_ASSERT_PTR_NOT_NULL(rt);
    return rt;
}

static uint64_t live_actors(shoal_runtime_t *rt)
{
    shoal_runtime_stats_t st;
    shoal_runtime_stats(rt, &st);
    return st.actors_live;
}

/* The release hook runs before the live count drops (actor.c), so once it
 * is back to `want` every ended actor's module reference is gone. */
static bool wait_live(shoal_runtime_t *rt, uint64_t want, double timeout_s)
{
    double end = shoal_test_now() + timeout_s;
    while (live_actors(rt) != want && shoal_test_now() < end)
        sched_yield();
    return live_actors(rt) == want;
}

/* ---- refusals ------------------------------------------------------------- */

/* Loads path, which must be refused with "<path>: plugin refused: <why>";
 * nothing stays loaded or mapped. */
static void assert_refused(const char *path, const char *why)
{
    shoal_loader_t *L = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    shoal_module_t *m = (shoal_module_t *)1;
    shoal_diag_t err;
    memset(&err, 0, sizeof err);
    CU_ASSERT_EQUAL(shoal__module_load(L, path, &m, &err), SHOAL_ELOAD);
    CU_ASSERT_PTR_NULL(m);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 0);
    char got[1200], want[1200];
    shoal__diag_format(&err, got, sizeof got);
    snprintf(want, sizeof want, "%s: plugin refused: %s", path, why);
    CU_ASSERT_STRING_EQUAL(got, want);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "\n    got:  %s\n    want: %s\n", got, want);
    CU_ASSERT_STRING_EQUAL(err.file, path);
    CU_ASSERT_EQUAL(err.line, 0);
    CU_ASSERT(!mapped(path));
    shoal__loader_destroy(L);
}

static void test_missing_file(void)
{
    assert_refused(fixture("does_not_exist.so"), "no such file");
}

static void test_not_a_regular_file(void)
{
    assert_refused(fixture(""), "not a shared object (not a regular file)");
}

static void test_not_elf(void)
{
    assert_refused(fixture("not_elf.so"), "not a shared object (not an ELF file)");
    /* An empty file too. */
    char path[] = "/tmp/shoal-test-empty-XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    assert_refused(path, "not a shared object (not an ELF file)");
    unlink(path);
}

static void test_elf_not_shared(void)
{
    assert_refused(fixture("not_shared.o"),
                   "not a shared object (an ELF file, but not a 64-bit .so)");
}

static void test_abi_major_from_note(void)
{
    shoal_plugin_note_t note;
    CU_ASSERT_FATAL(elf_note(fixture("abi_major.so"), &note));
    CU_ASSERT_EQUAL(note.abi_major, 99);
    char why[300];
    snprintf(why, sizeof why, "built for shoal ABI 99.0; this host speaks ABI %d.%d",
             SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR);
    assert_refused(fixture("abi_major.so"), why);
}

static void test_abi_major_from_descriptor(void)
{
    shoal_plugin_note_t note;
    CU_ASSERT(!elf_note(fixture("desc_major.so"), &note));
    char why[300];
    snprintf(why, sizeof why, "built for shoal ABI 99.0; this host speaks ABI %d.%d",
             SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR);
    assert_refused(fixture("desc_major.so"), why);
}

static void test_abi_minor_newer(void)
{
    char why[300];
    snprintf(why, sizeof why,
             "built for shoal ABI %d.%d, newer than this host's %d.%d: rebuild it against this "
             "host's SDK, or upgrade the host",
             SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR + 1, SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR);
    assert_refused(fixture("abi_minor.so"), why);
}

static void test_descriptor_too_small(void)
{
    char why[300];
    snprintf(why, sizeof why, "descriptor is 24 bytes, smaller than the %zu bytes of ABI %d.0",
             offsetof(shoal_plugin_t, init), SHOAL_ABI_MAJOR);
    assert_refused(fixture("short_desc.so"), why);
}

static void test_no_descriptor_symbol(void)
{
    assert_refused(fixture("no_symbol.so"), "no 'shoal_plugin' symbol: export a descriptor with "
                                            "SHOAL_PLUGIN() from <shoal/plugin.h>");
}

static void test_note_and_descriptor_disagree(void)
{
    assert_refused(fixture("note_mismatch.so"), "the ABI note and the descriptor disagree");
}

static void test_bad_names(void)
{
    assert_refused(fixture("bad_name.so"), "plugin name 'Bad.Name' must be 1-64 of [a-z0-9_-]");
    assert_refused(fixture("bad_behaviour_name.so"),
                   "behaviour 1 of plugin 'badbeh': name 'Upper' must be 1-64 of [a-z0-9_-]");
}

static void test_no_behaviours(void)
{
    assert_refused(fixture("no_behaviours.so"), "plugin 'empty' declares no behaviours");
}

static void test_no_handle_message(void)
{
    assert_refused(fixture("no_handler.so"), "behaviour 'nohandler.lazy' has no handle_message");
}

static void test_duplicate_behaviours(void)
{
    assert_refused(fixture("dup_behaviour.so"), "plugin 'dup' has two behaviours named 'twin'");
}

static void test_dlopen_error(void)
{
    const char *path = fixture("undefined_symbol.so");
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
    CU_ASSERT(!mapped(path));
    shoal__loader_destroy(L);
}

/* The plugin's init refuses: the reason and the code are in the message.
 * Run in a child process: a loader that crashes here must not take the
 * whole suite down with it. */
static void test_init_fails(void)
{
    const char *path = fixture("init_fails.so");
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
                         (int)mapped(path), shoal__diag_format(&err, msg, sizeof msg));
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

/* ctor_marker.so has a constructor that sets SHOAL_FIXTURE_CTOR_MARKER and
 * an ABI 99 note: refused before dlopen, so the constructor never ran.
 * ctor_ok.so, the same code with this ABI, shows the mark works. */
static void test_constructor_not_run_before_abi_check(void)
{
    unsetenv("SHOAL_FIXTURE_CTOR_MARKER");
    unsetenv("SHOAL_FIXTURE_CTOR_OK");
    char why[300];
    snprintf(why, sizeof why, "built for shoal ABI 99.0; this host speaks ABI %d.%d",
             SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR);
    assert_refused(fixture("ctor_marker.so"), why);
    CU_ASSERT_PTR_NULL(getenv("SHOAL_FIXTURE_CTOR_MARKER"));

    shoal_loader_t *L = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    shoal_module_t *m = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, fixture("ctor_ok.so"), &m, &err), SHOAL_OK);
    CU_ASSERT_PTR_NOT_NULL(getenv("SHOAL_FIXTURE_CTOR_OK"));
    CU_ASSERT_PTR_NULL(getenv("SHOAL_FIXTURE_CTOR_MARKER"));
    shoal__module_release(m);
    CU_ASSERT(!mapped(fixture("ctor_ok.so")));
    shoal__loader_destroy(L);
    unsetenv("SHOAL_FIXTURE_CTOR_OK");
}

/* ---- loading good plugins --------------------------------------------------- */

static void test_no_note_loads(void)
{
    const char *path = fixture("no_note.so");
    shoal_plugin_note_t note;
    CU_ASSERT(!elf_note(path, &note)); /* the fixture really has none */
    shoal_loader_t *L = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    shoal_module_t *m = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, path, &m, &err), SHOAL_OK);
    CU_ASSERT_STRING_EQUAL(shoal__module_plugin(m)->name, "nonote");
    CU_ASSERT_PTR_NOT_NULL(shoal__module_behaviour(m, "plain"));
    shoal__module_release(m);
    CU_ASSERT(!mapped(path));
    shoal__loader_destroy(L);
}

static void test_good_loads(void)
{
    const char *path = fixture("good.so");
    shoal_plugin_note_t note;
    CU_ASSERT_FATAL(elf_note(path, &note));
    CU_ASSERT_EQUAL(note.abi_major, SHOAL_ABI_MAJOR);
    CU_ASSERT_EQUAL(note.abi_minor, SHOAL_ABI_MINOR);
    CU_ASSERT_EQUAL(note.descriptor_size, sizeof(shoal_plugin_t));
    good_log_reset();
    CU_ASSERT(!mapped(path));

    shoal_loader_t *L = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    shoal_module_t *m = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, path, &m, &err), SHOAL_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 1);
    /* The code runs from a private copy, never from the file at the path. */
    CU_ASSERT(!mapped(path));
    ino_t ino = copy_ino(m);
    CU_ASSERT(copy_mapped(ino));
    CU_ASSERT_EQUAL(good_log_count("init"), 1);
    CU_ASSERT_EQUAL(good_log_count("fini"), 0);

    const shoal_plugin_t *d = shoal__module_plugin(m);
    CU_ASSERT_EQUAL(d->abi_major, SHOAL_ABI_MAJOR);
    CU_ASSERT_EQUAL(d->abi_minor, SHOAL_ABI_MINOR);
    CU_ASSERT_EQUAL(d->size, sizeof(shoal_plugin_t));
    CU_ASSERT_STRING_EQUAL(d->name, "good");
    CU_ASSERT_STRING_EQUAL(d->version, "1.2.3");
    CU_ASSERT_STRING_EQUAL(shoal__module_path(m), path);

    const shoal_behaviour_t *alpha = shoal__module_behaviour(m, "alpha");
    const shoal_behaviour_t *beta = shoal__module_behaviour(m, "beta");
    CU_ASSERT_PTR_NOT_NULL_FATAL(alpha);
    CU_ASSERT_PTR_NOT_NULL_FATAL(beta);
    CU_ASSERT_STRING_EQUAL(alpha->name, "alpha");
    CU_ASSERT_STRING_EQUAL(beta->name, "beta");
    /* The host's copies (loader.c), carrying the plugin's callbacks. */
    CU_ASSERT_PTR_NOT_EQUAL(alpha, d->behaviours[0]);
    CU_ASSERT_PTR_EQUAL(alpha->handle_message, d->behaviours[0]->handle_message);
    CU_ASSERT_PTR_EQUAL(beta->handle_message, d->behaviours[1]->handle_message);
    CU_ASSERT_EQUAL(shoal__module_behaviour_count(m), 2);
    CU_ASSERT_PTR_EQUAL(shoal__module_behaviour_at(m, 0), alpha);
    CU_ASSERT_PTR_EQUAL(shoal__module_behaviour_at(m, 1), beta);
    CU_ASSERT_PTR_NULL(shoal__module_behaviour_at(m, 2));
    CU_ASSERT_PTR_NULL(d->behaviours[2]);
    CU_ASSERT_PTR_NOT_NULL(alpha->handle_call);
    CU_ASSERT_PTR_NULL(beta->handle_call);
    CU_ASSERT_PTR_NULL(shoal__module_behaviour(m, "gamma"));
    CU_ASSERT_PTR_NULL(shoal__module_behaviour(m, "Alpha"));
    CU_ASSERT_PTR_NULL(shoal__module_behaviour(m, ""));

    /* The only reference: release runs fini and unmaps at once. */
    shoal__module_release(m);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 0);
    CU_ASSERT_EQUAL(good_log_count("fini"), 1);
    CU_ASSERT(!copy_mapped(ino));
    shoal__loader_destroy(L);
}

static void test_load_twice_one_module(void)
{
    const char *path = fixture("good.so");
    good_log_reset();
    shoal_loader_t *L = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    shoal_module_t *m1 = NULL, *m2 = NULL, *m3 = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, path, &m1, &err), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, path, &m2, &err), SHOAL_OK);
    CU_ASSERT_PTR_EQUAL(m1, m2);
    ino_t ino = copy_ino(m1);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 1);
    /* The same file by another name (a symlink) is the same module too. */
    char link[64];
    snprintf(link, sizeof link, "/tmp/shoal-test-link-%d.so", (int)getpid());
    unlink(link);
    CU_ASSERT_EQUAL_FATAL(symlink(path, link), 0);
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, link, &m3, &err), SHOAL_OK);
    CU_ASSERT_PTR_EQUAL(m1, m3);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 1);
    unlink(link);
    /* Plugin init ran once. */
    CU_ASSERT_EQUAL(good_log_count("init"), 1);

    shoal__module_release(m3);
    shoal__module_release(m2);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 1);
    CU_ASSERT(copy_mapped(ino));
    CU_ASSERT_EQUAL(good_log_count("fini"), 0);
    shoal__module_release(m1);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 0);
    CU_ASSERT(!copy_mapped(ino));
    CU_ASSERT_EQUAL(good_log_count("fini"), 1);

    /* Loaded again after closing: a new module, init runs again. */
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, path, &m1, &err), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 1);
    CU_ASSERT_EQUAL(good_log_count("init"), 2);
    shoal__module_release(m1);
    CU_ASSERT_EQUAL(good_log_count("fini"), 2);
    shoal__loader_destroy(L);
}

typedef struct good_stats_s {
    uint64_t messages;
    uint64_t calls;
} good_stats_t;

/* Calls a good.alpha actor; returns its counts (all ones on failure). */
static good_stats_t call_alpha(shoal_runtime_t *rt, shoal_pid_t pid)
{
    good_stats_t st;
    memset(&st, 0xff, sizeof st);
    shoal_answer_t ans;
    int rc = shoal_runtime_call(rt, pid, GOOD_MSG_TYPE, NULL, 0, 10000, &ans);
    CU_ASSERT_EQUAL(rc, SHOAL_OK);
    if (rc != SHOAL_OK)
        return st;
    CU_ASSERT_EQUAL(ans.status, SHOAL_OK);
    CU_ASSERT_EQUAL(ans.type, GOOD_MSG_TYPE);
    CU_ASSERT_EQUAL(ans.size, sizeof st);
    if (ans.size == sizeof st)
        memcpy(&st, ans.data, sizeof st);
    shoal_answer_release(&ans);
    return st;
}

/* The module stays mapped while an actor spawned from it lives, after the
 * holder let go; it is closed when the last one ends. */
static void test_actors_keep_module_mapped(void)
{
    const char *path = fixture("good.so");
    good_log_reset();
    shoal_loader_t *L = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    shoal_module_t *m = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, path, &m, &err), SHOAL_OK);
    ino_t ino = copy_ino(m);
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t parent = shoal_test_recorder_spawn(rt);
    shoal_node_t *args = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__node_parse("pool.yaml", "start: 5\n", 9, &args, &err), SHOAL_OK);

    shoal_pid_t a = SHOAL_PID_NONE, b = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(
        shoal__module_spawn(rt, m, parent, shoal__module_behaviour(m, "alpha"), args, 64, &a),
        SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(
        shoal__module_spawn(rt, m, parent, shoal__module_behaviour(m, "beta"), NULL, 64, &b),
        SHOAL_OK);
    good_stats_t st = call_alpha(rt, a); /* init has run: args no longer needed */
    CU_ASSERT_EQUAL(st.messages, 5);
    CU_ASSERT_EQUAL(st.calls, 1);
    shoal__node_free(args);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, a, GOOD_MSG_TYPE, &i, sizeof i), SHOAL_OK);
    st = call_alpha(rt, a);
    CU_ASSERT_EQUAL(st.messages, 8);
    CU_ASSERT_EQUAL(st.calls, 2);
    /* beta has no handle_call: answered SHOAL_ENOTSUP by the runtime. */
    shoal_answer_t ans;
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, b, 1, NULL, 0, 10000, &ans), SHOAL_OK);
    CU_ASSERT_EQUAL(ans.status, SHOAL_ENOTSUP);
    shoal_answer_release(&ans);

    /* The holder lets go: two actors still run the code. */
    shoal__module_release(m);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 1);
    CU_ASSERT(copy_mapped(ino));

    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, a), SHOAL_OK);
    CU_ASSERT_FATAL(shoal_test_wait_exits(1, 10.0));
    CU_ASSERT_EQUAL(shoal_test_exit_from(0), a);
    CU_ASSERT_EQUAL(shoal_test_exit_status(0), SHOAL_ESHUTDOWN);
    /* One actor left: still mapped, however long we wait. */
    struct timespec ts = {0, 50000000};
    nanosleep(&ts, NULL);
    CU_ASSERT(copy_mapped(ino));
    CU_ASSERT_EQUAL(shoal__loader_count(L), 1);
    CU_ASSERT_EQUAL(good_log_count("fini"), 0);
    /* beta still answers. */
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, b, 1, NULL, 0, 10000, &ans), SHOAL_OK);
    CU_ASSERT_EQUAL(ans.status, SHOAL_ENOTSUP);
    shoal_answer_release(&ans);

    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, b), SHOAL_OK);
    CU_ASSERT_FATAL(shoal_test_wait_exits(2, 10.0));
    CU_ASSERT_EQUAL(shoal_test_exit_from(1), b);
    CU_ASSERT_EQUAL(shoal_test_exit_status(1), SHOAL_ESHUTDOWN);
    CU_ASSERT(wait_unmapped(ino, 10.0));
    CU_ASSERT_EQUAL(shoal__loader_count(L), 0);
    CU_ASSERT_EQUAL(good_log_count("init"), 1);
    CU_ASSERT_EQUAL(good_log_count("fini"), 1);
    shoal_runtime_destroy(rt);
    shoal__loader_destroy(L);
}

/* The loader may go before its modules: they close on their last release. */
static void test_loader_destroyed_before_module(void)
{
    const char *path = fixture("good.so");
    good_log_reset();
    shoal_loader_t *L = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    shoal_module_t *m = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, path, &m, &err), SHOAL_OK);
    ino_t ino = copy_ino(m);
    shoal__loader_destroy(L);
    CU_ASSERT(copy_mapped(ino));
    CU_ASSERT_STRING_EQUAL(shoal__module_plugin(m)->name, "good");
    shoal__module_release(m);
    CU_ASSERT(!copy_mapped(ino));
    CU_ASSERT_EQUAL(good_log_count("fini"), 1);
}

/* One cycle: load, spawn, call, release the holder, stop, wait until the
 * actor's reference is gone. Returns the number of things that went wrong
 * (so 1,000 cycles do not make 1,000 x N assertions). */
static int one_cycle(shoal_runtime_t *rt, shoal_loader_t *L, const char *path, uint64_t live0)
{
    int bad = 0;
    shoal_module_t *m = NULL;
    shoal_diag_t err;
    if (shoal__module_load(L, path, &m, &err) != SHOAL_OK)
        return 1;
    bad += shoal__loader_count(L) != 1;
    shoal_pid_t pid = SHOAL_PID_NONE;
    if (shoal__module_spawn(rt, m, SHOAL_PID_NONE, shoal__module_behaviour(m, "alpha"), NULL, 16,
                            &pid) != SHOAL_OK) {
        shoal__module_release(m);
        return bad + 1;
    }
    shoal_answer_t ans;
    if (shoal_runtime_call(rt, pid, GOOD_MSG_TYPE, NULL, 0, 10000, &ans) == SHOAL_OK) {
        good_stats_t st;
        bad += ans.status != SHOAL_OK || ans.size != sizeof st;
        if (ans.size == sizeof st) {
            memcpy(&st, ans.data, sizeof st);
            bad += st.calls != 1 || st.messages != 0;
        }
        shoal_answer_release(&ans);
    } else {
        bad++;
    }
    shoal__module_release(m);
    bad += shoal_runtime_stop_actor(rt, pid) != SHOAL_OK;
    bad += !wait_live(rt, live0, 10.0);
    bad += shoal__loader_count(L) != 0;
    return bad;
}

/* 1,000 load/unload cycles leave /proc/self/maps at its baseline.
 *
 * The baseline is taken after one warm-up cycle, not before the first load:
 * the first cycle may leave behind things that are not leaks and that later
 * cycles reuse -- the dynamic loader's own bookkeeping, malloc arenas of the
 * worker threads that ran the plugin's code, envelope slabs of the runtime.
 * From then on the cycles must put back exactly the file mappings: the same
 * set of mapped files (no good.so, and no dependency of it such as
 * libshoal.so left behind) and the same number of file-backed lines (a
 * segment of a file left mapped shows there).
 *
 * Anonymous mappings are not compared line for line: glibc may still open a
 * new malloc arena (a 64 MiB reservation, two lines) when two workers first
 * contend, and sanitizer runtimes map shadow memory as the heap grows --
 * both seen in practice, neither ours. They are bounded instead: a mapping
 * leaked per cycle would add a thousand lines, not a handful. */
#define MAPS_ANON_SLACK 16

static void test_load_unload_cycles(void)
{
    const char *path = fixture("good.so");
    const unsigned cycles = 1000;
    good_log_reset();
    shoal_loader_t *L = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    uint64_t live0 = live_actors(rt);

    CU_ASSERT_EQUAL(one_cycle(rt, L, path, live0), 0); /* warm-up */
    CU_ASSERT(!any_copy_mapped("good.so"));
    unsigned fds = open_fds();   /* each private copy's fd closes with its module */
    static maps_t before, after; /* large: not on the stack */
    maps_read(&before);

    int bad = 0;
    for (unsigned i = 0; i < cycles; i++)
        bad += one_cycle(rt, L, path, live0);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(!any_copy_mapped("good.so"));
    CU_ASSERT_EQUAL(open_fds(), fds);
    maps_read(&after);

    CU_ASSERT_EQUAL(after.npaths, before.npaths);
    for (unsigned i = 0; i < after.npaths || i < before.npaths; i++) {
        const char *x = i < before.npaths ? before.paths[i] : "(none)";
        const char *y = i < after.npaths ? after.paths[i] : "(none)";
        if (strcmp(x, y) != 0) {
            fprintf(stderr, "\n    maps differ: before %s, after %s\n", x, y);
            CU_FAIL("the set of mapped files changed");
            break;
        }
    }
    CU_ASSERT_EQUAL(after.file_lines, before.file_lines);
    CU_ASSERT(after.lines <= before.lines + MAPS_ANON_SLACK);
    if (after.file_lines != before.file_lines || after.lines > before.lines + MAPS_ANON_SLACK) {
        fprintf(stderr, "\n    /proc/self/maps: %u lines (%u of files) before, %u (%u) after\n",
                before.lines, before.file_lines, after.lines, after.file_lines);
        maps_diff(&before, &after);
    }
    CU_ASSERT(!mapped(path));
    CU_ASSERT_EQUAL(good_log_count("init"), (int)cycles + 1);
    CU_ASSERT_EQUAL(good_log_count("fini"), (int)cycles + 1);
    maps_free(&before);
    maps_free(&after);
    shoal_runtime_destroy(rt);
    shoal__loader_destroy(L);
}

/* ---- crashing handlers ---------------------------------------------------- */

static void test_handler_error(void)
{
    const char *path = fixture("handler_error.so");
    shoal_loader_t *L = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    shoal_module_t *m = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, path, &m, &err), SHOAL_OK);
    ino_t ino = copy_ino(m);
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t parent = shoal_test_recorder_spawn(rt), pid = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(
        shoal__module_spawn(rt, m, parent, shoal__module_behaviour(m, "fail"), NULL, 0, &pid),
        SHOAL_OK);
    /* Calls are fine... */
    shoal_answer_t ans;
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, pid, 5, NULL, 0, 10000, &ans), SHOAL_OK);
    CU_ASSERT_EQUAL(ans.status, SHOAL_OK);
    CU_ASSERT_EQUAL(ans.size, 0);
    shoal_answer_release(&ans);
    shoal__module_release(m); /* only the actor holds it now */
    /* ...a message makes handle_message return 77: the actor ends with it. */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, 5, NULL, 0), SHOAL_OK);
    CU_ASSERT_FATAL(shoal_test_wait_exits(1, 10.0));
    CU_ASSERT_EQUAL(shoal_test_exit_from(0), pid);
    CU_ASSERT_EQUAL(shoal_test_exit_status(0), 77);
    CU_ASSERT(wait_unmapped(ino, 10.0));
    CU_ASSERT(shoal_test_log_has("fail: ended: unknown error (77)"));
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, 5, NULL, 0), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_test_exits(), 1);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 0);
    shoal_runtime_destroy(rt);
    shoal__loader_destroy(L);
}

static void test_handler_panic(void)
{
    const char *path = fixture("handler_panic.so");
    shoal_loader_t *L = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    shoal_module_t *m = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, path, &m, &err), SHOAL_OK);
    ino_t ino = copy_ino(m);
    const shoal_behaviour_t *beh = shoal__module_behaviour(m, "panic");
    CU_ASSERT_PTR_NOT_NULL_FATAL(beh);
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t parent = shoal_test_recorder_spawn(rt), a = SHOAL_PID_NONE, b = SHOAL_PID_NONE;

    /* A message: handle_message panics, the actor ends with SHOAL_EPANIC. */
    CU_ASSERT_EQUAL_FATAL(shoal__module_spawn(rt, m, parent, beh, NULL, 0, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, a, 9, NULL, 0), SHOAL_OK);
    CU_ASSERT_FATAL(shoal_test_wait_exits(1, 10.0));
    CU_ASSERT_EQUAL(shoal_test_exit_from(0), a);
    CU_ASSERT_EQUAL(shoal_test_exit_status(0), SHOAL_EPANIC);
    CU_ASSERT(shoal_test_log_has("panic: panic: fixture panic on message type 9"));

    /* A call: handle_call panics; the caller gets SHOAL_EPANIC as status. */
    CU_ASSERT_EQUAL_FATAL(shoal__module_spawn(rt, m, parent, beh, NULL, 0, &b), SHOAL_OK);
    shoal__module_release(m);
    CU_ASSERT(copy_mapped(ino));
    shoal_answer_t ans;
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, b, 3, NULL, 0, 10000, &ans), SHOAL_OK);
    CU_ASSERT_EQUAL(ans.status, SHOAL_EPANIC);
    shoal_answer_release(&ans);
    CU_ASSERT_FATAL(shoal_test_wait_exits(2, 10.0));
    CU_ASSERT_EQUAL(shoal_test_exit_from(1), b);
    CU_ASSERT_EQUAL(shoal_test_exit_status(1), SHOAL_EPANIC);
    CU_ASSERT(shoal_test_log_has("panic: panic: fixture panic on call type 3"));
    CU_ASSERT(wait_unmapped(ino, 10.0));
    CU_ASSERT_EQUAL(shoal__loader_count(L), 0);
    shoal_runtime_destroy(rt);
    shoal__loader_destroy(L);
}

/* ---- the SDK the plugins bind to ------------------------------------------- */

/* Plugins bind their shoal_* references to the test's (static) libshoal,
 * exported with ENABLE_EXPORTS. Pull in what good.so calls, then check that
 * each resolves to this executable, not to a second copy of libshoal. */
typedef void (*any_fn_t)(void);
__attribute__((used)) static const any_fn_t sdk_fns[] = {
    (any_fn_t)shoal_arg_int, (any_fn_t)shoal_reply_set, (any_fn_t)shoal_reply_error,
    (any_fn_t)shoal_panic,   (any_fn_t)shoal_send,
};

static void test_sdk_exported_from_executable(void)
{
    static const char *const names[] = {"shoal_arg_int", "shoal_reply_set", "shoal_reply_error",
                                        "shoal_panic", "shoal_send"};
    Dl_info self;
    CU_ASSERT_FATAL(dladdr(good_log, &self) != 0); /* an object of this executable */
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *sym = dlsym(RTLD_DEFAULT, names[i]);
        CU_ASSERT_PTR_NOT_NULL(sym);
        Dl_info where;
        CU_ASSERT(sym != NULL && dladdr(sym, &where) != 0 && where.dli_fbase == self.dli_fbase);
        CU_ASSERT(sdk_fns[i] != NULL);
    }
}

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
    char *argv[] = {(char *)SHOAL_PLUGIN_CHECK, (char *)(option ? option : fixture(name)),
                    option ? (char *)fixture(name) : NULL, NULL};
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

/* --describe prints the plugin and each behaviour's args schema, one
 * aligned row per key; exit 0, or 2 when the plugin is refused (a malformed
 * schema included), with the loader's reason. */
static void test_plugin_check_describe(void)
{
    char got[4096], want[4096];
    CU_ASSERT_EQUAL(plugin_check_output("--describe", "fault.so", 0, got, sizeof got), 0);
    snprintf(
        want, sizeof want,
        "plugin fault 1.0.0 (ABI %d.%d) from %s\n"
        "  fault.fault\n"
        "    mode      enum      default ok     ok | segv | abort | loop | sleep | leak | fail | "
        "panic | overflow  what a faulty message does\n"
        "    every     integer   default 1      >= 1                                               "
        "                fault on every N-th message this worker handles\n"
        "    ms        duration  default 0                                                         "
        "                for loop and sleep; 0 = for ever\n"
        "    bytes     size      default 1MiB                                                      "
        "                for leak\n"
        "    record    string    optional                                                          "
        "                a file each normally handled message appends its sequence number to\n"
        "    init      enum      default ok     ok | fail                                          "
        "                fail: init returns SHOAL_EINVAL\n"
        "    announce  bool      default false                                                     "
        "                true: init logs \"fault: ready\" (a test learns the worker's PID)\n",
        SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR, fixture("fault.so"));
    CU_ASSERT_STRING_EQUAL(got, want);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "\n    got:\n%s    want:\n%s", got, want);

    /* No schema: an ABI 1.2 plugin (junk where 1.3 has args), and a 1.3 one
     * that declares none. */
    CU_ASSERT_EQUAL(plugin_check_output("--describe", "abi_1_2.so", 0, got, sizeof got), 0);
    snprintf(want, sizeof want,
             "plugin abi12 1.2 (ABI %d.2) from %s\n"
             "  abi12.old  (args not declared: not checked)\n",
             SHOAL_ABI_MAJOR, fixture("abi_1_2.so"));
    CU_ASSERT_STRING_EQUAL(got, want);
    CU_ASSERT_EQUAL(plugin_check_output("--describe", "good.so", 0, got, sizeof got), 0);
    snprintf(want, sizeof want,
             "plugin good 1.2.3 (ABI %d.%d) from %s\n"
             "  good.alpha  (args not declared: not checked)\n"
             "  good.beta  (args not declared: not checked)\n",
             SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR, fixture("good.so"));
    CU_ASSERT_STRING_EQUAL(got, want);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "\n    got:\n%s    want:\n%s", got, want);

    /* Refused: exit 2, the reason on stderr. */
    CU_ASSERT_EQUAL(plugin_check_output("--describe", "schema_range.so", 2, got, sizeof got), 2);
    snprintf(want, sizeof want,
             "shoal-plugin-check: %s: plugin refused: behaviour 'bad.args' arg 'rate': range "
             "10..1 has min above max\n",
             fixture("schema_range.so"));
    CU_ASSERT_STRING_EQUAL(got, want);
    CU_ASSERT_EQUAL(plugin_check_output("--describe", "abi_major.so", 2, NULL, 0), 2);
}

/* A malformed args schema refuses the plugin, naming the behaviour and the
 * key (the checks themselves are test_argcheck's). */
static void test_malformed_schemas(void)
{
    assert_refused(fixture("schema_key.so"),
                   "behaviour 'bad.args' arg 1: key 'max-size' is not an identifier "
                   "([A-Za-z_][A-Za-z0-9_]*, at most 64)");
    assert_refused(fixture("schema_dup.so"), "behaviour 'bad.args' has two args named 'ok'");
    assert_refused(fixture("schema_type.so"), "behaviour 'bad.args' arg 'rate': unknown type 99");
    assert_refused(fixture("schema_enum.so"),
                   "behaviour 'bad.args' arg 'mode': an enum needs choices (a NULL-terminated "
                   "list)");
    assert_refused(fixture("schema_range.so"),
                   "behaviour 'bad.args' arg 'rate': range 10..1 has min above max");
    assert_refused(fixture("schema_default.so"),
                   "behaviour 'bad.args' arg 'rate': default 'fast' is not valid: expected an "
                   "integer, got 'fast'");
}

/* A plugin built by an ABI 1.2 SDK has no args schema: the host's copy of
 * its behaviour has args NULL, whatever follows the plugin's struct. A 1.3
 * plugin's schema is the plugin's own array. */
static void abi_1_2_plugin_has_no_schema(void)
{
    shoal_loader_t *L;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    shoal_module_t *m = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, fixture("abi_1_2.so"), &m, &err), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal__module_plugin(m)->abi_minor, 2);
    const shoal_behaviour_t *b = shoal__module_behaviour(m, "old");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_PTR_NULL(b->args);
    /* What a host reading past the 1.2 size would have taken for a schema. */
    CU_ASSERT_PTR_EQUAL(shoal__module_plugin(m)->behaviours[0]->args, (void *)0x10);
    shoal__module_release(m);

    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, fixture("fault.so"), &m, &err), SHOAL_OK);
    b = shoal__module_behaviour(m, "fault");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_PTR_EQUAL(b->args, shoal__module_plugin(m)->behaviours[0]->args);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b->args);
    CU_ASSERT_STRING_EQUAL(b->args[0].key, "mode");
    CU_ASSERT_STRING_EQUAL(b->args[6].key, "announce");
    CU_ASSERT_PTR_NULL(b->args[7].key);
    shoal__module_release(m);
    shoal__loader_destroy(L);
}

/* A plugin built by an ABI 1.0 SDK has no inspect: the host's copy of its
 * behaviour has inspect NULL, whatever follows the plugin's struct, and
 * inspecting its actor answers with an empty "info". */
static void abi_1_0_plugin_has_no_inspect(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/abi_1_0.so", SHOAL_FIXTURE_DIR);
    shoal_loader_t *L;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    shoal_module_t *m = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, path, &m, &err), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal__module_plugin(m)->abi_minor, 0);
    const shoal_behaviour_t *b = shoal__module_behaviour(m, "old");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_PTR_NULL(b->inspect);
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal__module_spawn(rt, m, SHOAL_PID_NONE, b, NULL, 0, &pid), SHOAL_OK);
    shoal_answer_t a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_inspect(rt, pid, 5000, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    if (a.status == SHOAL_OK)
        CU_ASSERT_PTR_NOT_NULL(strstr((const char *)a.data, "\"behaviour\":\"old\""));
    if (a.status == SHOAL_OK)
        CU_ASSERT_PTR_NOT_NULL(strstr((const char *)a.data, "\"info\":{}}"));
    shoal_answer_release(&a);
    shoal_runtime_destroy(rt);
    shoal__module_release(m);
    shoal__loader_destroy(L);
}

/* Writes src's bytes into dst: a new file, or over an existing one in place
 * (the same inode, as `cp src dst` does). */
static int write_file(const char *src, const char *dst)
{
    int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    char buf[65536];
    ssize_t n;
    int rc = in < 0 || out < 0 ? -1 : 0;
    while (rc == 0 && (n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n)
            rc = -1;
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    return rc;
}

/* A plugin rebuilt (the same path, a new file there) while the old one is
 * loaded: the new load is the new code, from its own private copy; the old
 * module keeps its own. */
static void test_changed_file_loads_fresh(void)
{
    char dir[] = "/tmp/shoal-test-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/p.so", dir);
    CU_ASSERT_EQUAL_FATAL(write_file(fixture("good.so"), path), 0);
    shoal_loader_t *L;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    shoal_module_t *a, *b;
    shoal_diag_t err = {0};
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, path, &a, &err), SHOAL_OK);
    CU_ASSERT_STRING_EQUAL(shoal__module_plugin(a)->name, "good");
    struct stat before, after;
    CU_ASSERT_EQUAL(stat(path, &before), 0);
    /* Rebuilt: a new file renamed over the old name. */
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s/p.so.new", dir);
    CU_ASSERT_EQUAL_FATAL(write_file(fixture("no_note.so"), tmp), 0);
    CU_ASSERT_EQUAL_FATAL(rename(tmp, path), 0);
    CU_ASSERT_EQUAL(stat(path, &after), 0);
    CU_ASSERT_NOT_EQUAL(before.st_ino, after.st_ino);
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, path, &b, &err), SHOAL_OK);
    CU_ASSERT_PTR_NOT_EQUAL(a, b);
    CU_ASSERT_STRING_EQUAL(shoal__module_plugin(b)->name, "nonote");
    CU_ASSERT_STRING_EQUAL(shoal__module_plugin(a)->name, "good"); /* old code still mapped */
    CU_ASSERT_STRING_EQUAL(shoal__module_path(b), path);           /* named by the real path */
    CU_ASSERT_EQUAL(shoal__loader_count(L), 2);
    shoal__module_release(a);
    shoal__module_release(b);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 0);
    shoal__loader_destroy(L);
    unlink(path);
    rmdir(dir);
}

/* `cp new.so plugins/x.so` over a loaded plugin, in place, while an actor
 * runs its code: the running code is the private copy, so the actor goes on
 * answering; a truncated file (cp caught half way) is refused by the next
 * load, never mapped; the next load of the finished file is the new code. */
static void test_overwritten_in_place(void)
{
    char dir[] = "/tmp/shoal-test-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/p.so", dir);
    CU_ASSERT_EQUAL_FATAL(write_file(fixture("good.so"), path), 0);
    shoal_loader_t *L;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    shoal_module_t *a, *b;
    shoal_diag_t err = {0};
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, path, &a, &err), SHOAL_OK);
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal__module_spawn(rt, a, SHOAL_PID_NONE,
                                              shoal__module_behaviour(a, "alpha"), NULL, 16, &pid),
                          SHOAL_OK);
    CU_ASSERT_EQUAL(call_alpha(rt, pid).calls, 1);
    struct stat before, after;
    CU_ASSERT_EQUAL(stat(path, &before), 0);

    /* Caught half way: the first 200 bytes only. */
    CU_ASSERT_EQUAL_FATAL(truncate(path, 200), 0);
    CU_ASSERT_EQUAL(call_alpha(rt, pid).calls, 2);
    CU_ASSERT_EQUAL(shoal__module_load(L, path, &b, &err), SHOAL_ELOAD);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 1);

    /* Finished: another plugin's bytes in the same inode. */
    CU_ASSERT_EQUAL_FATAL(write_file(fixture("no_note.so"), path), 0);
    CU_ASSERT_EQUAL(stat(path, &after), 0);
    CU_ASSERT_EQUAL(before.st_ino, after.st_ino);
    CU_ASSERT_EQUAL(call_alpha(rt, pid).calls, 3); /* the old code, untouched */
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, path, &b, &err), SHOAL_OK);
    CU_ASSERT_PTR_NOT_EQUAL(a, b);
    CU_ASSERT_STRING_EQUAL(shoal__module_plugin(b)->name, "nonote");
    CU_ASSERT_STRING_EQUAL(shoal__module_plugin(a)->name, "good");
    CU_ASSERT(!mapped(path));
    shoal__module_release(b);
    shoal__module_release(a); /* the actor still holds a */
    CU_ASSERT_EQUAL(call_alpha(rt, pid).calls, 4);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 1);
    shoal_runtime_destroy(rt);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 0);
    shoal__loader_destroy(L);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    snprintf(good_log, sizeof good_log, "/tmp/shoal-test-good-%d.log", (int)getpid());
    setenv("SHOAL_FIXTURE_GOOD_LOG", good_log, 1); /* before any thread starts */
    static const shoal_test_case_t cases[] = {
        {"missing file", test_missing_file},
        {"not a regular file", test_not_a_regular_file},
        {"not an ELF file", test_not_elf},
        {"ELF but not a shared object", test_elf_not_shared},
        {"ABI major from the note", test_abi_major_from_note},
        {"ABI major from the descriptor", test_abi_major_from_descriptor},
        {"ABI minor newer", test_abi_minor_newer},
        {"descriptor too small", test_descriptor_too_small},
        {"no descriptor symbol", test_no_descriptor_symbol},
        {"note and descriptor disagree", test_note_and_descriptor_disagree},
        {"bad names", test_bad_names},
        {"no behaviours", test_no_behaviours},
        {"no handle_message", test_no_handle_message},
        {"duplicate behaviours", test_duplicate_behaviours},
        {"dlopen error", test_dlopen_error},
        {"plugin init fails", test_init_fails},
        {"constructor not run before the ABI check", test_constructor_not_run_before_abi_check},
        {"no note loads", test_no_note_loads},
        {"good loads", test_good_loads},
        {"an ABI 1.0 plugin has no inspect", abi_1_0_plugin_has_no_inspect},
        {"load twice: one module", test_load_twice_one_module},
        {"actors keep the module mapped", test_actors_keep_module_mapped},
        {"loader destroyed before its module", test_loader_destroyed_before_module},
        {"1,000 load/unload cycles", test_load_unload_cycles},
        {"handler returns an error", test_handler_error},
        {"handler panics", test_handler_panic},
        {"SDK exported from the executable", test_sdk_exported_from_executable},
        {"shoal-plugin-check", test_plugin_check},
        {"shoal-plugin-check --describe", test_plugin_check_describe},
        {"malformed args schemas are refused", test_malformed_schemas},
        {"an ABI 1.2 plugin has no args schema", abi_1_2_plugin_has_no_schema},
        {"a rebuilt file at a loaded path loads fresh", test_changed_file_loads_fresh},
        {"a file overwritten in place under running code", test_overwritten_in_place},
        {NULL, NULL},
    };
    int rc = shoal_test_run("loader", cases);
    unlink(good_log);
    return rc;
}
