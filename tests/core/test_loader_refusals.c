/* test_loader_refusals.c - plugins the loader (host/loader.c) refuses, with
 * the fixtures in tests/fixtures/plugins: every refusal with its whole
 * message, in the order the loader checks -- no such file, not a regular
 * file, not an ELF file, not a shared object, a huge file (neither copied),
 * too large, no descriptor symbol, bad
 * names, no behaviours, no handle_message, duplicate behaviours, a dlopen
 * error, a plugin init that fails -- and malformed args schemas; nothing
 * stays loaded or mapped. The refusals of the ABI fields are
 * test_loader_abi's; a malformed ELF note that is no note is here too. */
#include <elf.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
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

/* ---- the ELF note, read before any code runs ---------------------------------- */

/* good.so's bytes, with its shoal note's header at *note_at and the section
 * header of .note.shoal at *shdr_at (malloc'ed; fatal when not found). */
static unsigned char *good_with_note(size_t *size, size_t *note_at, size_t *shdr_at)
{
    FILE *f = fopen(lk_fixture("good.so"), "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    unsigned char *b = malloc(1 << 22);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    *size = fread(b, 1, 1 << 22, f);
    fclose(f);
    const Elf64_Nhdr want = {sizeof(SHOAL_NOTE_NAME), sizeof(shoal_plugin_note_t), SHOAL_NOTE_TYPE};
    unsigned char head[sizeof want + sizeof(SHOAL_NOTE_NAME)];
    memcpy(head, &want, sizeof want);
    memcpy(head + sizeof want, SHOAL_NOTE_NAME, sizeof(SHOAL_NOTE_NAME));
    unsigned char *at = memmem(b, *size, head, sizeof head);
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    *note_at = (size_t)(at - b);
    Elf64_Ehdr eh;
    memcpy(&eh, b, sizeof eh);
    *shdr_at = 0;
    for (size_t i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh;
        memcpy(&sh, b + eh.e_shoff + i * sizeof sh, sizeof sh);
        if (sh.sh_type == SHT_NOTE && sh.sh_offset == *note_at)
            *shdr_at = eh.e_shoff + i * sizeof sh;
    }
    CU_ASSERT_FATAL(*shdr_at != 0);
    return b;
}

static void write_file(const char *path, const unsigned char *b, size_t size)
{
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL_FATAL(fwrite(b, 1, size, f), size);
    CU_ASSERT_EQUAL_FATAL(fclose(f), 0);
}

/* A new empty file's name in path ("/tmp/shoal-test-note-XXXXXX"). */
static void temp_file(char *path)
{
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
}

/* b written to path, and what the host reads of it before any code runs
 * (shoal__plugin_file_check): its status; *copy closed, -1 if none. */
static int file_check(const char *path, const unsigned char *b, size_t size, bool *found, int *copy,
                      shoal_diag_t *err)
{
    write_file(path, b, size);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    CU_ASSERT_FATAL(fd >= 0);
    shoal_plugin_note_t note;
    *found = true;
    int rc = shoal__plugin_file_check(path, fd, (off_t)size, copy, &note, found, err);
    if (*copy >= 0)
        close(*copy);
    close(fd);
    return rc;
}

/* A shoal note whose n_descsz is 4 GiB less a byte or three claims more
 * than its section holds: it is no note (a malformed note is skipped, as
 * one that overruns its section always was). Its size was rounded up in 32
 * bits, to 0: the note was read anyway, its descriptor taken from past the
 * note -- past the section's buffer when the section ends at the name (a
 * heap overflow, seen writing fuzz_plugin_file). */
static void test_note_descsz_wraps(void)
{
    size_t size, note_at, shdr_at;
    unsigned char *b = good_with_note(&size, &note_at, &shdr_at);
    char path[] = "/tmp/shoal-test-note-XXXXXX";
    temp_file(path);
    /* n_descsz 0xffffffff, and a descriptor that names ABI 2: had the note
     * been read, the plugin would be refused for it. Skipped, the file is
     * good.so, and loads. */
    uint32_t descsz = 0xffffffffu;
    uint16_t major = 2;
    memcpy(b + note_at + offsetof(Elf64_Nhdr, n_descsz), &descsz, sizeof descsz);
    memcpy(b + note_at + sizeof(Elf64_Nhdr) + 8, &major, sizeof major);
    write_file(path, b, size);
    shoal_loader_t *L = NULL;
    shoal_module_t *m = lk_load(&L, path);
    shoal__module_release(m);
    shoal__loader_destroy(L);
    /* The section cut to the note's header and name: nothing of it is read
     * past them. */
    uint64_t cut = sizeof(Elf64_Nhdr) + 8;
    memcpy(b + shdr_at + offsetof(Elf64_Shdr, sh_size), &cut, sizeof cut);
    int copy = -1;
    bool found;
    shoal_diag_t err;
    CU_ASSERT_EQUAL(file_check(path, b, size, &found, &copy, &err), SHOAL_OK);
    CU_ASSERT(!found);
    CU_ASSERT(copy >= 0);
    unlink(path);
    free(b);
}

/* Note sections past 1 MiB in all are refused unread: a file listing 4096
 * note sections of 1 MiB each over the same bytes held the host thread
 * 1.8 s reading 4 GiB of them. Here one section claims 1 MiB and a byte. */
static void test_notes_past_their_bound(void)
{
    size_t size, note_at, shdr_at;
    unsigned char *b = good_with_note(&size, &note_at, &shdr_at);
    char path[] = "/tmp/shoal-test-note-XXXXXX";
    temp_file(path);
    uint64_t big = (UINT64_C(1) << 20) + 1;
    memcpy(b + shdr_at + offsetof(Elf64_Shdr, sh_size), &big, sizeof big);
    int copy = 0;
    bool found;
    shoal_diag_t err;
    CU_ASSERT_EQUAL(file_check(path, b, size, &found, &copy, &err), SHOAL_ELOAD);
    CU_ASSERT(!found);
    CU_ASSERT_EQUAL(copy, -1);
    CU_ASSERT_STRING_EQUAL(err.msg,
                           "plugin refused: its note sections hold more than 1024 KiB: not read");
    CU_ASSERT_STRING_EQUAL(err.file, path);
    unlink(path);
    free(b);
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
        {"a note whose descriptor size wraps is no note", test_note_descsz_wraps},
        {"note sections past their bound are refused", test_notes_past_their_bound},
        {NULL, NULL},
    };
    return lk_run("loader_refusals", cases);
}
