/* test_loader_cycles.c - 1,000 load, spawn, call, release and stop cycles of
 * good.so through the loader (host/loader.c): each leaves nothing loaded,
 * and together they leave /proc/self/maps at its baseline (the same mapped
 * files, the same number of file-backed lines, anonymous mappings within a
 * small slack) and the open file descriptors at theirs. */
#include <dirent.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader_kit.h"

/* ---- /proc/self/maps, the file descriptors, the live actors --------------- */

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

/* ---- cycles --------------------------------------------------------------- */

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
    if (shoal_runtime_call(rt, pid, LK_GOOD_MSG_TYPE, NULL, 0, 10000, &ans) == SHOAL_OK) {
        lk_good_stats_t st;
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
    const char *path = lk_fixture("good.so");
    const unsigned cycles = 1000;
    lk_good_log_reset();
    shoal_loader_t *L = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    shoal_runtime_t *rt = lk_runtime();
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
    CU_ASSERT(!lk_mapped(path));
    CU_ASSERT_EQUAL(lk_good_log_count("init"), (int)cycles + 1);
    CU_ASSERT_EQUAL(lk_good_log_count("fini"), (int)cycles + 1);
    maps_free(&before);
    maps_free(&after);
    shoal_runtime_destroy(rt);
    shoal__loader_destroy(L);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"1,000 load/unload cycles", test_load_unload_cycles},
        {NULL, NULL},
    };
    return lk_run("loader_cycles", cases);
}
