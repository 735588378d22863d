/* test_host_pull.c - a pull pool in a running host (host/host_pull.c,
 * reload.c): what a reload replaces and why; the plan of a reload for a
 * host running one (prefetch and buffer live, a new source, source_args,
 * redeliver or kind a new pool, a dead letter replaced a new pool for the
 * pool naming it too, new worker args a swap); a reload that replaces a
 * pull pool and its dead letter, the old dead letter told to drain only
 * once the old pull pool has ended; prefetch and buffer sent live; a
 * (forward) pool whose last swap did not take effect (its COMMIT failed or
 * went unanswered) has its workers swapped again by the next reload.
 *
 * The pull pool itself is core/pool's: nothing here sends work through
 * one. A host started here spawns a spec of kind pull, which a runtime
 * without pull pools runs as a forward one (and answers SET_PREFETCH with
 * SHOAL_ENOTSUP); the plan reads a pool's prefetch and buffer from its
 * record once it reports them, else from its config, so the texts checked
 * are the same either way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host/config.h"
#include "host/host.h"
#include "pool/pool.h"
#include "support.h"

#ifndef SHOAL_PLUGIN_DIR
#error "SHOAL_PLUGIN_DIR must name <build>/plugins"
#endif

#define FILE_NAME "/etc/shoal/t.yaml"

static void same(const char *got, const char *want, const char *text)
{
    CU_ASSERT_STRING_EQUAL(got, want);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "\n    for:  %s\n    got:  %s\n    want: %s\n", text, got, want);
}

static shoal_config_t *parse_ok(const char *text)
{
    shoal_config_t *c = NULL;
    shoal_diag_t d;
    memset(&d, 0, sizeof d);
    int rc = shoal__config_parse(FILE_NAME, text, strlen(text), &c, &d);
    if (rc != SHOAL_OK) {
        char err[1200];
        fprintf(stderr, "\n    for:  %s\n    refused: %s\n", text,
                shoal__diag_format(&d, err, sizeof err));
    }
    CU_ASSERT_EQUAL(rc, SHOAL_OK);
    return c;
}

/* text with %1$s the plugin dir, parsed and resolved with loader L: rc and
 * the error out; *out the config (NULL on failure). */
static int resolve(shoal_loader_t *L, const char *fmt, shoal_config_t **out, char *err, size_t size)
{
    char text[2048];
    snprintf(text, sizeof text, fmt, SHOAL_PLUGIN_DIR);
    shoal_diag_t d;
    memset(&d, 0, sizeof d);
    *out = NULL;
    shoal_config_t *c = NULL;
    int rc = shoal__config_parse(FILE_NAME, text, strlen(text), &c, &d);
    if (rc == SHOAL_OK && (rc = shoal__config_resolve(c, L, &d)) != SHOAL_OK) {
        shoal__config_free(c);
        c = NULL;
    }
    if (rc != SHOAL_OK)
        shoal__diag_format(&d, err, size);
    *out = c;
    return rc;
}

#define PL "plugins: {e: e.so, b: b.so}\n"

/* ---- reload: what changes ------------------------------------------------------ */

/* The pull keys of a and b's pool "jobs" (parsed, not resolved): whether
 * b needs a new pool, and why. */
static void replace_case(const char *a, const char *b, bool want, const char *why)
{
    shoal_config_t *ca = parse_ok(a), *cb = parse_ok(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ca);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cb);
    char got[200] = "x";
    bool r = shoal__host_pull_replace(shoal__config_pool(ca, "jobs"),
                                      shoal__config_pool(cb, "jobs"), got, sizeof got);
    CU_ASSERT_EQUAL(r, want);
    same(got, why, b);
    shoal__config_free(ca);
    shoal__config_free(cb);
}

#define JOBS                                                                                       \
    PL "pools:\n  dl: {worker: e.echo}\n  dm: {worker: e.echo}\n  jobs:\n    worker: e.echo\n"

static void test_replace(void)
{
    const char *pull = JOBS "    kind: pull\n    source: b.burn\n    source_args: {rounds: 1}\n"
                            "    dead_letter: dl\n";
    replace_case(JOBS, pull, true, "kind forward -> pull");
    replace_case(pull, JOBS, true, "kind pull -> forward");
    replace_case(pull, pull, false, "");
    /* live: not a reason to replace */
    replace_case(pull,
                 JOBS "    kind: pull\n    source: b.burn\n    source_args: {rounds: 1}\n"
                      "    dead_letter: dl\n    prefetch: 9\n    buffer: 5\n    size: 7\n",
                 false, "");
    replace_case(pull,
                 JOBS "    kind: pull\n    source: e.echo\n    source_args: {rounds: 1}\n"
                      "    dead_letter: dl\n",
                 true, "source b.burn -> e.echo");
    replace_case(pull, JOBS "    kind: pull\n    dead_letter: dl\n", true, "source b.burn -> none");
    replace_case(pull,
                 JOBS "    kind: pull\n    source: b.burn\n    source_args: {rounds: 2}\n"
                      "    dead_letter: dl\n",
                 true, "source_args changed");
    replace_case(pull,
                 JOBS "    kind: pull\n    source: b.burn\n    source_args: {rounds: 1}\n"
                      "    dead_letter: dl\n    redeliver: 3\n",
                 true, "redeliver 0 -> 3");
    replace_case(pull,
                 JOBS "    kind: pull\n    source: b.burn\n    source_args: {rounds: 1}\n"
                      "    dead_letter: dm\n",
                 true, "dead_letter dl -> dm");
    replace_case(pull, JOBS "    kind: pull\n    source: b.burn\n    source_args: {rounds: 1}\n",
                 true, "dead_letter dl -> none");
}

/* A host running failed (forward) and jobs (pull, dead letters to failed);
 * the plan of a reload to each next config. */
#define HOST_CFG(JOBS_EXTRA, FAILED_EXTRA)                                                         \
    "runtime: { threads: 2 }\n"                                                                    \
    "plugins: { burn: %1$s/burn/burn.so, echo: %1$s/echo/echo.so }\n"                              \
    "pools:\n"                                                                                     \
    "  jobs: { kind: pull, worker: burn.burn, dead_letter: failed" JOBS_EXTRA " }\n"               \
    "  failed: { worker: echo.echo" FAILED_EXTRA " }\n"
/* what runs: jobs of 2 workers, prefetch 2, buffer 100; failed of 1 */
#define JOBS_NOW ", size: 2, prefetch: 2, buffer: 100"
#define FAILED_NOW ", size: 1"

static void test_plan(void)
{
    shoal_loader_t *L = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    shoal_config_t *c;
    char err[1200];
    CU_ASSERT_EQUAL_FATAL(resolve(L, HOST_CFG(JOBS_NOW, FAILED_NOW), &c, err, sizeof err),
                          SHOAL_OK);
    shoal_host_t *h = NULL;
    shoal_diag_t d;
    memset(&d, 0, sizeof d);
    FILE *log = fopen("/dev/null", "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    int rc = shoal__host_start(c, L, log, &h, &d);
    if (rc != SHOAL_OK)
        fprintf(stderr, "\n    start: %s\n", shoal__diag_format(&d, err, sizeof err));
    CU_ASSERT_EQUAL_FATAL(rc, SHOAL_OK);
    /* started in dead-letter order: failed first */
    CU_ASSERT_EQUAL_FATAL(h->npools, 2);
    CU_ASSERT_STRING_EQUAL(h->pools[0].name, "failed");
    CU_ASSERT_STRING_EQUAL(h->pools[1].name, "jobs");
    static const struct {
        const char *cfg, *plan;
    } cases[] = {
        {HOST_CFG(JOBS_NOW, FAILED_NOW), "no change"},
        {HOST_CFG(", size: 2, prefetch: 4, buffer: 50", FAILED_NOW),
         "jobs prefetch 2 -> 4; jobs buffer 100 -> 50"},
        {HOST_CFG(", size: 3, prefetch: 2, buffer: 0", FAILED_NOW),
         "jobs size 2 -> 3; jobs buffer 100 -> 0"},
        {HOST_CFG(JOBS_NOW ", source: burn.burn", FAILED_NOW),
         "replace jobs (source none -> burn.burn: a new pool under its name; the old one drains)"},
        {HOST_CFG(JOBS_NOW ", source: burn.burn, source_args: { rounds: 2 }", FAILED_NOW),
         "replace jobs (source none -> burn.burn: a new pool under its name; the old one "
         "drains)"},
        {HOST_CFG(JOBS_NOW ", redeliver: 2", FAILED_NOW),
         "replace jobs (redeliver 0 -> 2: a new pool under its name; the old one drains)"},
        {HOST_CFG(JOBS_NOW ", args: { rounds: 3 }", FAILED_NOW),
         "jobs: replace its workers (burn.burn)"},
        /* its dead letter replaced: jobs is too (its spec holds the PID) ... */
        {HOST_CFG(JOBS_NOW, FAILED_NOW ", restart: { max: 9 }"),
         "replace failed (a new pool under its name; the old one drains); replace jobs (its "
         "dead_letter failed gets a new pool: a new pool under its name; the old one drains)"},
        /* ... but not when only its size or workers change */
        {HOST_CFG(JOBS_NOW, ", size: 2, args: { reply: x }"),
         "failed: replace its workers (echo.echo); failed size 1 -> 2"},
        /* a forward pool's strategy: live */
        {HOST_CFG(JOBS_NOW, FAILED_NOW ", strategy: least_loaded"),
         "failed strategy fifo -> least_loaded"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        shoal_config_t *next;
        if (resolve(L, cases[i].cfg, &next, err, sizeof err) != SHOAL_OK) {
            fprintf(stderr, "\n    refused: %s\n", err);
            CU_FAIL("a next config refused");
            continue;
        }
        char plan[1200];
        shoal__host_plan(h, next, plan, sizeof plan);
        same(plan, cases[i].plan, cases[i].cfg);
        shoal__config_free(next);
    }
    /* kind: a forward jobs (the pull keys gone) */
    shoal_config_t *next;
    CU_ASSERT_EQUAL_FATAL(
        resolve(
            L,
            "plugins: { burn: %1$s/burn/burn.so, echo: %1$s/echo/echo.so }\npools:\n"
            "  jobs: { worker: burn.burn, size: 2 }\n  failed: { worker: echo.echo, size: 1 }\n",
            &next, err, sizeof err),
        SHOAL_OK);
    char plan[1200];
    shoal__host_plan(h, next, plan, sizeof plan);
    same(plan, "replace jobs (kind pull -> forward: a new pool under its name; the old one drains)",
         "forward");
    shoal__config_free(next);
    shoal__host_destroy(h);
    fclose(log);
    shoal__loader_destroy(L);
}

/* ---- a reload -------------------------------------------------------------------- */

static void write_config(const char *path, const char *fmt)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, fmt, SHOAL_PLUGIN_DIR);
    fclose(f);
}

/* The entry of the pool called name: the running one, or the one with pid. */
static shoal_host_pool_t *entry(shoal_host_t *h, const char *name, shoal_pid_t pid)
{
    for (size_t i = 0; i < h->npools; i++)
        if (strcmp(h->pools[i].name, name) == 0 &&
            (pid != SHOAL_PID_NONE ? h->pools[i].pid == pid : !h->pools[i].draining))
            return &h->pools[i];
    return NULL;
}

/* Whether the log file at path holds text. */
static bool logged(FILE *log, const char *path, const char *text)
{
    fflush(log);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    bool found = strstr(buf, text) != NULL;
    if (!found)
        fprintf(stderr, "\n    not logged: %s\n    log: %s\n", text, buf);
    return found;
}

/* A host run in-process on a config file of its own (in a fresh
 * directory), its log written to a file there. */
typedef struct {
    char dir[64], path[256], logpath[256];
    FILE *log;
    shoal_loader_t *L;
    shoal_host_t *h;
} live_t;

/* Starts lv's host on fmt (as write_config takes it). */
static void live_start(live_t *lv, const char *fmt)
{
    snprintf(lv->dir, sizeof lv->dir, "/tmp/shoal-host-pull-XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(lv->dir));
    snprintf(lv->path, sizeof lv->path, "%s/s.yaml", lv->dir);
    snprintf(lv->logpath, sizeof lv->logpath, "%s/log", lv->dir);
    write_config(lv->path, fmt);
    lv->log = fopen(lv->logpath, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(lv->log);
    lv->L = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&lv->L), SHOAL_OK);
    shoal_config_t *c = NULL;
    shoal_diag_t d;
    memset(&d, 0, sizeof d);
    CU_ASSERT_EQUAL_FATAL(shoal__config_load(lv->path, &c, &d), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal__config_resolve(c, lv->L, &d), SHOAL_OK);
    lv->h = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__host_start(c, lv->L, lv->log, &lv->h, &d), SHOAL_OK);
}

/* Drains lv's host (nothing left busy), destroys it, removes its files. */
static void live_end(live_t *lv)
{
    CU_ASSERT_EQUAL(shoal__host_drain(lv->h, 5000, NULL, NULL), 0);
    shoal__host_destroy(lv->h);
    shoal__loader_destroy(lv->L);
    fclose(lv->log);
    CU_ASSERT_EQUAL(unlink(lv->path), 0);
    CU_ASSERT_EQUAL(unlink(lv->logpath), 0);
    CU_ASSERT_EQUAL(rmdir(lv->dir), 0);
}

static void test_reload(void)
{
    live_t lv;
    live_start(&lv, HOST_CFG(JOBS_NOW, FAILED_NOW));
    shoal_host_t *h = lv.h;
    shoal_loader_t *L = lv.L;
    FILE *log = lv.log;
    const char *path = lv.path, *logpath = lv.logpath;
    char want[600];
    CU_ASSERT_TRUE(logged(log, logpath,
                          "pool jobs started: 2 workers, mailbox 64, pull: prefetch 2, buffer 100, "
                          "redeliver 0, dead_letter failed\n"));
    shoal_pid_t failed = entry(h, "failed", SHOAL_PID_NONE)->pid;
    shoal_pid_t jobs = entry(h, "jobs", SHOAL_PID_NONE)->pid;
    CU_ASSERT_EQUAL(entry(h, "jobs", jobs)->dead_letter, failed);
    CU_ASSERT_EQUAL(entry(h, "failed", failed)->dead_letter, SHOAL_PID_NONE);

    /* 1. prefetch and buffer: sent live, the same pools (a runtime without
     * pull pools refuses them: the line then says so after each) */
    write_config(path, HOST_CFG(", size: 2, prefetch: 4, buffer: 50", FAILED_NOW));
    char why[1200] = "";
    CU_ASSERT_EQUAL(shoal__host_reload(h, path, why, sizeof why), SHOAL_OK);
    CU_ASSERT_EQUAL(h->npools, 2);
    CU_ASSERT_PTR_NOT_NULL(entry(h, "jobs", jobs));
    CU_ASSERT_PTR_NOT_NULL(entry(h, "failed", failed));
    snprintf(want, sizeof want, "reload: generation 2 from %s: jobs prefetch 2 -> 4", path);
    CU_ASSERT_TRUE(logged(log, logpath, want));
    CU_ASSERT_TRUE(logged(log, logpath, "; jobs buffer 100 -> 50"));
    shoal_config_t *next = NULL;
    char err[1200];
    CU_ASSERT_EQUAL_FATAL(resolve(L, HOST_CFG(", size: 2, prefetch: 4, buffer: 50", FAILED_NOW),
                                  &next, err, sizeof err),
                          SHOAL_OK);
    char plan[1200];
    shoal__host_plan(h, next, plan, sizeof plan);
    same(plan, "no change", "after the live reload");
    shoal__config_free(next);

    /* 1b. failed's strategy: live, the same pool, its stats say so */
    write_config(
        path, HOST_CFG(", size: 2, prefetch: 4, buffer: 50", FAILED_NOW ", strategy: round_robin"));
    CU_ASSERT_EQUAL(shoal__host_reload(h, path, why, sizeof why), SHOAL_OK);
    CU_ASSERT_PTR_NOT_NULL(entry(h, "failed", failed));
    CU_ASSERT_TRUE(logged(log, logpath, "failed strategy fifo -> round_robin"));
    shoal_pool_stats_t fst;
    CU_ASSERT_EQUAL(shoal_pool_stats(h->rt, failed, &fst, 5000), SHOAL_OK);
    CU_ASSERT_EQUAL(fst.strategy, SHOAL_POOL_STRATEGY_ROUND_ROBIN);

    /* 2. failed gets a new pool, so jobs does; the old failed drains only
     * once the old jobs (which may still send it dead letters) has ended */
    write_config(path, HOST_CFG(", size: 2, prefetch: 4, buffer: 50",
                                FAILED_NOW ", strategy: round_robin, restart: {max: 9}"));
    CU_ASSERT_EQUAL(shoal__host_reload(h, path, why, sizeof why), SHOAL_OK);
    snprintf(want, sizeof want,
             "reload: generation 4 from %s: replaced failed; replaced jobs (its dead_letter failed "
             "gets a new pool); ",
             path);
    CU_ASSERT_TRUE(logged(log, logpath, want));
    shoal_host_pool_t *nf = entry(h, "failed", SHOAL_PID_NONE),
                      *nj = entry(h, "jobs", SHOAL_PID_NONE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(nf);
    CU_ASSERT_PTR_NOT_NULL_FATAL(nj);
    CU_ASSERT_NOT_EQUAL(nf->pid, failed);
    CU_ASSERT_NOT_EQUAL(nj->pid, jobs);
    CU_ASSERT_EQUAL(nj->dead_letter, nf->pid);
    shoal_host_pool_t *of = entry(h, "failed", failed);
    CU_ASSERT_PTR_NOT_NULL_FATAL(of);
    CU_ASSERT_TRUE(of->draining);
    CU_ASSERT_TRUE(of->drain_held);
    CU_ASSERT_FALSE(shoal__pool_is_ended(of->rec));
    CU_ASSERT_FALSE(entry(h, "jobs", jobs)->drain_held);
    bool gone = false;
    for (int i = 0; i < 500 && !gone; i++) {
        shoal__host_tidy(h);
        of = entry(h, "failed", failed);
        shoal_host_pool_t *oj = entry(h, "jobs", jobs);
        /* told to drain: the old jobs has ended (or been forgotten) */
        if (of != NULL && !of->drain_held)
            CU_ASSERT_TRUE(oj == NULL || shoal__pool_is_ended(oj->rec));
        gone = of == NULL && oj == NULL;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    CU_ASSERT_TRUE(gone);
    CU_ASSERT_EQUAL(h->npools, 2);

    /* 3. shutdown: jobs first, then failed; nothing left busy */
    live_end(&lv);
}

/* ---- a swap that did not take effect ---------------------------------------------- */

/* A host running front (forward, echo's workers). */
#define FRONT_CFG(EXTRA)                                                                           \
    "runtime: { threads: 2 }\n"                                                                    \
    "plugins: { echo: %1$s/echo/echo.so }\n"                                                       \
    "pools:\n"                                                                                     \
    "  front: { worker: echo.echo, size: 2" EXTRA " }\n"

static uint64_t swap_done(const shoal_host_pool_t *hp)
{
    return atomic_load_explicit(&hp->rec->swap_done, memory_order_relaxed);
}

/* A reload swaps front's workers (new args): its COMMIT answered, the
 * entry owes no swap. Then the entry is made to name a swap the pool never
 * committed (as when a COMMIT fails, or is not answered in time, and the
 * pool does not carry it out): the plan of the same config says its
 * workers are replaced, and why, and a reload of it swaps them again --
 * the record then names that swap, the entry owes none, the plan is "no
 * change". It used to see the same config and change nothing: the pool
 * ran other code than its config named, for good. */
static void test_swap_owed(void)
{
    live_t lv;
    live_start(&lv, FRONT_CFG(""));
    shoal_host_t *h = lv.h;
    FILE *log = lv.log;
    const char *path = lv.path, *logpath = lv.logpath;
    char want[600];
    shoal_host_pool_t *hp = entry(h, "front", SHOAL_PID_NONE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(hp);
    shoal_pid_t front = hp->pid;
    CU_ASSERT_EQUAL(hp->swap_token, 0);
    CU_ASSERT_EQUAL(swap_done(hp), 0);

    /* 1. new args: the workers swapped, the swap done */
    write_config(path, FRONT_CFG(", args: { reply: x }"));
    char why[1200] = "";
    CU_ASSERT_EQUAL(shoal__host_reload(h, path, why, sizeof why), SHOAL_OK);
    snprintf(want, sizeof want,
             "reload: generation 2 from %s: front: 2 workers replaced (echo.echo); ", path);
    CU_ASSERT_TRUE(logged(log, logpath, want));
    hp = entry(h, "front", front);
    CU_ASSERT_PTR_NOT_NULL_FATAL(hp);
    CU_ASSERT_EQUAL(hp->swap_token, 0);
    uint64_t done = swap_done(hp);
    CU_ASSERT_NOT_EQUAL(done, 0);
    shoal_config_t *next = NULL;
    char err[1200], plan[1200];
    CU_ASSERT_EQUAL_FATAL(resolve(lv.L, FRONT_CFG(", args: { reply: x }"), &next, err, sizeof err),
                          SHOAL_OK);
    shoal__host_plan(h, next, plan, sizeof plan);
    same(plan, "no change", "after the swap");

    /* 2. a swap the pool did not carry out: the same config swaps again */
    hp->swap_token = done + 1;
    shoal__host_plan(h, next, plan, sizeof plan);
    same(plan, "front: replace its workers (echo.echo; its last swap has not taken effect)",
         "a swap owed");
    /* ... and once the record names the entry's swap, it is owed no more */
    hp->swap_token = done;
    shoal__host_plan(h, next, plan, sizeof plan);
    same(plan, "no change", "a swap done");
    hp->swap_token = done + 1;
    CU_ASSERT_EQUAL(shoal__host_reload(h, path, why, sizeof why), SHOAL_OK);
    snprintf(want, sizeof want,
             "reload: generation 3 from %s: front: 2 workers replaced (echo.echo); ", path);
    CU_ASSERT_TRUE(logged(log, logpath, want));
    hp = entry(h, "front", front);
    CU_ASSERT_PTR_NOT_NULL_FATAL(hp);
    CU_ASSERT_EQUAL(hp->swap_token, 0);
    CU_ASSERT_NOT_EQUAL(swap_done(hp), 0);
    CU_ASSERT_NOT_EQUAL(swap_done(hp), done);
    shoal__host_plan(h, next, plan, sizeof plan);
    same(plan, "no change", "after the swap owed");
    shoal__config_free(next);
    live_end(&lv);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"what a reload replaces", test_replace},
        {"a reload's plan", test_plan},
        {"a reload: dead letters drain last, prefetch live", test_reload},
        {"a swap that did not take effect is swapped again", test_swap_owed},
        {NULL, NULL},
    };
    return shoal_test_run("host_pull", cases);
}
