/* plugins_kit.c - the bundled plugins' suites' loader, runtime, calls,
 * inspect check, init-failure check and xs50 reference (plugins_kit.h). */
#include "plugins_kit.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "actor/actor.h"

#define STATS 0xFFFF0001u /* every plugin's stats call */

/* ---- finding and loading the plugins ------------------------------------------- */

static char build_dir[PATH_MAX];

/* <build>, from /proc/self/exe = <build>/bin/test_plugins_<concept>. */
static bool find_build_dir(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return false;
    exe[n] = '\0';
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(exe, '/');
        if (slash == NULL)
            return false;
        *slash = '\0';
    }
    snprintf(build_dir, sizeof build_dir, "%s", exe);
    return true;
}

static const char *plugin_path(const char *name)
{
    static char paths[8][PATH_MAX + 64];
    static unsigned next;
    char *p = paths[next++ % 8];
    snprintf(p, PATH_MAX + 64, "%s/plugins/%s/%s.so", build_dir, name, name);
    return p;
}

static shoal_loader_t *loader;
const char *const pl_names[PL_NPLUGINS] = {"echo", "burn", "sleep", "crash", "sink", "loadgen"};

static shoal_module_t *modules[PL_NPLUGINS];

/* The module of plugin `name`, loaded once (the loader's reference is kept
 * until main ends); NULL, with a failed assertion, when it cannot be. */
shoal_module_t *pl_module(const char *name)
{
    for (size_t i = 0; i < PL_NPLUGINS; i++) {
        if (strcmp(pl_names[i], name) != 0)
            continue;
        if (modules[i] != NULL)
            return modules[i];
        const char *path = plugin_path(name);
        if (access(path, R_OK) != 0) {
            fprintf(stderr, "\n    missing plugin: %s\n", path);
            CU_FAIL("a bundled plugin is missing");
            return NULL;
        }
        shoal_diag_t err;
        int rc = shoal__module_load(loader, path, &modules[i], &err);
        if (rc != SHOAL_OK) {
            char buf[1200];
            fprintf(stderr, "\n    %s\n", shoal__diag_format(&err, buf, sizeof buf));
            CU_FAIL("a bundled plugin was refused");
            modules[i] = NULL;
        }
        return modules[i];
    }
    CU_FAIL("not a bundled plugin");
    return NULL;
}

/* ---- a runtime that keeps its log ------------------------------------------------- */

/* The args trees of the running test, freed with it. */
#define MAX_TREES 32
static shoal_node_t *trees[MAX_TREES];
static unsigned ntrees;

const shoal_node_t *pl_yaml(const char *text)
{
    shoal_diag_t err;
    shoal_node_t *root = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__node_parse("pool.yaml", text, strlen(text), &root, &err),
                          SHOAL_OK);
    CU_ASSERT_FATAL(ntrees < MAX_TREES);
    trees[ntrees++] = root;
    return root;
}

/* Two workers, info logs kept; a recording parent for the plugins' actors. */
shoal_pid_t pl_parent;

void pl_done(shoal_runtime_t *rt)
{
    shoal_runtime_destroy(rt);
    for (unsigned i = 0; i < ntrees; i++)
        shoal__node_free(trees[i]);
    ntrees = 0;
}

/* ---- the parent: records how its children end --------------------------------------- */

shoal_runtime_t *pl_runtime(void)
{
    shoal_runtime_t *rt = shoal_test_runtime_logged(2, SHOAL_LOG_INFO);
    CU_ASSERT_PTR_NOT_NULL(rt);
    if (rt != NULL)
        pl_parent = shoal_test_recorder_spawn(rt);
    return rt;
}

/* Spawns <plugin>.<plugin> with args (YAML text, NULL for none) as a child
 * of the recording parent. */
shoal_pid_t pl_spawn(shoal_runtime_t *rt, const char *plugin, const char *args, uint32_t limit)
{
    shoal_module_t *m = pl_module(plugin);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const shoal_behaviour_t *b = shoal__module_behaviour(m, plugin);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    shoal_pid_t pid = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(
        shoal__module_spawn(rt, m, pl_parent, b, args ? pl_yaml(args) : NULL, limit, &pid),
        SHOAL_OK);
    return pid;
}

/* ---- calls and inspection ---------------------------------------------------------------- */

/* A call; copies the reply's payload (at most cap bytes) and returns its
 * size, or -1 on a failed call or a non-zero status (*status gets it). */
long pl_call(shoal_runtime_t *rt, shoal_pid_t pid, uint32_t type, const void *data, size_t size,
             void *out, size_t cap, uint32_t *rtype, int *status)
{
    shoal_answer_t ans;
    int rc = shoal_runtime_call(rt, pid, type, data, size, 10000, &ans);
    CU_ASSERT_EQUAL(rc, SHOAL_OK);
    if (status != NULL)
        *status = rc == SHOAL_OK ? ans.status : rc;
    if (rc != SHOAL_OK)
        return -1;
    long n = ans.status == SHOAL_OK ? (long)ans.size : -1;
    if (rtype != NULL)
        *rtype = ans.type;
    if (n > 0 && out != NULL)
        memcpy(out, ans.data, (size_t)n < cap ? (size_t)n : cap);
    shoal_answer_release(&ans);
    return n;
}

/* The stats call: fills st (st_size bytes), asserting the reply's shape. */
void pl_stats(shoal_runtime_t *rt, shoal_pid_t pid, void *st, size_t st_size)
{
    uint32_t type = 0;
    int status = 0;
    memset(st, 0xff, st_size);
    long n = pl_call(rt, pid, STATS, NULL, 0, st, st_size, &type, &status);
    CU_ASSERT_EQUAL(status, SHOAL_OK);
    CU_ASSERT_EQUAL(type, STATS);
    CU_ASSERT_EQUAL(n, (long)st_size);
}

/* The whole inspect answer must be exactly
 * {"pid":"<pid>","behaviour":"<name>","mailbox_depth":0,"mailbox_limit":<limit>,"info":<info>} */
void pl_inspect_is(shoal_runtime_t *rt, shoal_pid_t pid, const char *name, const char *limit,
                   const char *info)
{
    shoal_answer_t ans;
    int rc = shoal_runtime_inspect(rt, pid, 10000, &ans);
    CU_ASSERT_EQUAL_FATAL(rc, SHOAL_OK);
    CU_ASSERT_EQUAL(ans.status, SHOAL_OK);
    char want[1024];
    snprintf(want, sizeof want,
             "{\"pid\":\"%u.%u\",\"behaviour\":\"%s\",\"mailbox_depth\":0,\"mailbox_limit\":%s,"
             "\"info\":%s}",
             (unsigned)shoal__pid_slot(pid), (unsigned)shoal__pid_gen(pid), name, limit, info);
    const char *got = ans.status == SHOAL_OK && ans.data ? ans.data : "(no data)";
    CU_ASSERT_STRING_EQUAL(got, want);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "\n    got:  %s\n    want: %s\n", got, want);
    shoal_answer_release(&ans);
}

/* Init must fail: the actor ends with `reason` and the log holds the
 * line "<plugin>: <message>" (whole, up to its end). */
void pl_bad_args(shoal_runtime_t *rt, const char *plugin, const char *args, int reason,
                 const char *message)
{
    shoal_pid_t pid = pl_spawn(rt, plugin, args, 64);
    CU_ASSERT_EQUAL(shoal_test_wait_exit(pid, 10.0), reason);
    char line[700];
    snprintf(line, sizeof line, "> %s: %s\n", plugin, message);
    shoal_test_assert_logged(line);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, 1, NULL, 0), SHOAL_ENOPROC);
}

/* ---- xs50 (burn.h): the reference, computed here ------------------------------------------- */

uint32_t pl_xs(uint64_t v, unsigned rounds)
{
    uint32_t x = (uint32_t)(v + 1);
    for (unsigned i = 0; i < rounds; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
    }
    return x;
}

uint32_t pl_xs50_checksum(uint64_t n)
{
    uint32_t acc = 0;
    for (uint64_t v = 0; v < n; v++)
        acc ^= pl_xs(v, 50);
    return acc;
}

int pl_run(const char *suite, const shoal_test_case_t *cases)
{
    if (!find_build_dir()) {
        fprintf(stderr, "test_%s: cannot read /proc/self/exe\n", suite);
        return 1;
    }
    if (shoal__loader_create(&loader) != SHOAL_OK)
        return 1;
    int rc = shoal_test_run(suite, cases);
    for (size_t i = 0; i < PL_NPLUGINS; i++)
        if (modules[i] != NULL)
            shoal__module_release(modules[i]);
    shoal__loader_destroy(loader);
    return rc;
}
