/* loader_kit.c - the loader suites' fixtures, /proc/self/maps probes, ELF
 * note reader and refusal check (loader_kit.h). */
#include "loader_kit.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef SHOAL_FIXTURE_DIR
#error "SHOAL_FIXTURE_DIR must name the directory of the built fixtures"
#endif

/* ---- paths, messages ------------------------------------------------------ */

/* The fixture's absolute path (as /proc/self/maps would show it). */
const char *lk_fixture(const char *name)
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

char lk_good_log[64];

void lk_good_log_reset(void)
{
    int fd = open(lk_good_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    CU_ASSERT(fd >= 0);
    if (fd >= 0)
        close(fd);
}

/* Lines of good.so's init/fini log equal to what ("init" or "fini"). */
int lk_good_log_count(const char *what)
{
    FILE *f = fopen(lk_good_log, "r");
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

/* ---- /proc/self/maps ------------------------------------------------------- */

/* Whether a mapping of the file at path exists. */
bool lk_mapped(const char *path)
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
ino_t lk_copy_ino(const shoal_module_t *m)
{
    struct stat st;
    return fstat(shoal__module_fd(m), &st) == 0 ? st.st_ino : 0;
}

/* Whether the private copy with this inode is mapped: a "/memfd:shoal:..."
 * line of /proc/self/maps with that inode. */
bool lk_copy_mapped(ino_t ino)
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

bool lk_wait_unmapped(ino_t ino, double timeout_s)
{
    double end = shoal_test_now() + timeout_s;
    while (lk_copy_mapped(ino) && shoal_test_now() < end) {
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    return !lk_copy_mapped(ino);
}

/* ---- the ELF note, read here independently of the loader --------------------- */

/* Finds the shoal note in the file; true with *note filled when present.
 * Used to show each fixture is what it claims to be. */
bool lk_elf_note(const char *path, shoal_plugin_note_t *note)
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

/* ---- a runtime that keeps its log, a load, a refusal, a suite -------------- */

shoal_runtime_t *lk_runtime(void)
{
    shoal_runtime_t *rt = shoal_test_runtime_logged(2, SHOAL_LOG_WARN);
    CU_ASSERT_PTR_NOT_NULL(rt);
    return rt;
}

shoal_module_t *lk_load(shoal_loader_t **L, const char *path)
{
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(L), SHOAL_OK);
    shoal_module_t *m = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(*L, path, &m, &err), SHOAL_OK);
    return m;
}

/* Loads path, which must be refused with "<path>: plugin refused: <why>";
 * nothing stays loaded or mapped. */
void lk_assert_refused(const char *path, const char *why)
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
    CU_ASSERT(!lk_mapped(path));
    shoal__loader_destroy(L);
}

int lk_run(const char *suite, const shoal_test_case_t *cases)
{
    snprintf(lk_good_log, sizeof lk_good_log, "/tmp/shoal-test-good-%d.log", (int)getpid());
    setenv("SHOAL_FIXTURE_GOOD_LOG", lk_good_log, 1); /* before any thread starts */
    int rc = shoal_test_run(suite, cases);
    unlink(lk_good_log);
    return rc;
}
