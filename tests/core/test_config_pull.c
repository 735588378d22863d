/* test_config_pull.c - pull pools in shoald's config (host/config_pull.c):
 * a valid pull pool read into every field and into its spec (with what
 * host_pull.c adds: the dead letter's PID, the source's args); the start
 * order; a table of bad files, each refused with its whole message
 * (file:line:col); the source's behaviour and source_args resolved against
 * the bundled plugins (burn, loadgen: their args schemas); --help-config
 * and --check's line. Reloads are test_host_pull.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/code.h"
#include "host/config.h"
#include "host/host.h"
#include "config_kit.h"
#include "configs.h"
#include "support.h"

#ifndef SHOAL_PLUGIN_DIR
#error "SHOAL_PLUGIN_DIR must name <build>/plugins"
#endif

#define FILE_NAME "/etc/shoal/t.yaml"
#define F FILE_NAME ":"

static void same(const char *got, const char *want, const char *text)
{
    shoal_test_same(got, want, text);
}

static int parse(const char *text, shoal_config_t **c, char *err, size_t size)
{
    return shoal_test_config_parse(FILE_NAME, text, c, err, size);
}

/* text with %1$s the plugin dir, parsed and resolved with loader L. */
static int resolve(shoal_loader_t *L, const char *fmt, shoal_config_t **out, char *err, size_t size)
{
    return shoal_test_config_resolve(L, FILE_NAME, SHOAL_PLUGIN_DIR, fmt, out, err, size);
}

static shoal_config_t *parse_ok(const char *text)
{
    shoal_config_t *c = NULL;
    char err[1200];
    int rc = parse(text, &c, err, sizeof err);
    if (rc != SHOAL_OK)
        fprintf(stderr, "\n    for:  %s\n    refused: %s\n", text, err);
    CU_ASSERT_EQUAL(rc, SHOAL_OK);
    return c;
}

/* ---- a valid pull pool ------------------------------------------------------ */

#define PLUGINS "plugins:\n  burn: %1$s/burn/burn.so\n  loadgen: %1$s/loadgen/loadgen.so\n"

/* jobs names failed as its dead letter but comes first in the file: failed
 * starts first all the same. */
#define GOOD                                                                                       \
    PLUGINS "pools:\n"                                                                             \
            "  jobs:\n"                                                                            \
            "    kind: pull\n"                                                                     \
            "    worker: burn.burn\n"                                                              \
            "    size: 3\n"                                                                        \
            "    prefetch: 2\n"                                                                    \
            "    buffer: 100\n"                                                                    \
            "    redeliver: 3\n"                                                                   \
            "    dead_letter: failed\n"                                                            \
            "    source: loadgen.loadgen\n"                                                        \
            "    source_args: {target: failed, rate: 10}\n"                                        \
            "  failed:\n"                                                                          \
            "    worker: burn.burn\n"

static void test_valid(void)
{
    shoal_loader_t *L = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    shoal_config_t *c;
    char err[1200];
    CU_ASSERT_EQUAL_FATAL(resolve(L, GOOD, &c, err, sizeof err), SHOAL_OK);
    const shoal_config_pool_t *p = shoal__config_pool(c, "jobs");
    const shoal_config_pool_t *f = shoal__config_pool(c, "failed");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(p->kind, SHOAL_POOL_KIND_PULL);
    CU_ASSERT_EQUAL(p->size, 3);
    CU_ASSERT_EQUAL(p->mailbox, 64); /* each worker's own: allowed, default */
    CU_ASSERT_EQUAL(p->prefetch, 2);
    CU_ASSERT_EQUAL(p->buffer, 100);
    CU_ASSERT_EQUAL(p->redeliver, 3);
    CU_ASSERT_STRING_EQUAL(p->dead_letter, "failed");
    CU_ASSERT_STRING_EQUAL(p->src_plugin, "loadgen");
    CU_ASSERT_STRING_EQUAL(p->src_behaviour, "loadgen");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p->src_args);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p->src_beh);
    CU_ASSERT_STRING_EQUAL(p->src_beh->name, "loadgen");
    CU_ASSERT_PTR_EQUAL(p->src_module, shoal__config_plugin(c, "loadgen")->module);
    CU_ASSERT_PTR_EQUAL(p->module, shoal__config_plugin(c, "burn")->module);
    CU_ASSERT_PTR_NULL(p->args); /* the workers' args are not the source's */
    /* a forward pool: the defaults */
    CU_ASSERT_EQUAL(f->kind, SHOAL_POOL_KIND_FORWARD);
    CU_ASSERT_EQUAL(f->prefetch, 1);
    CU_ASSERT_EQUAL(f->buffer, 1024);
    CU_ASSERT_EQUAL(f->redeliver, 0);
    CU_ASSERT_PTR_NULL(f->dead_letter);
    CU_ASSERT_PTR_NULL(f->src_plugin);
    CU_ASSERT_PTR_NULL(f->src_beh);
    /* the dead-letter target starts first */
    CU_ASSERT_PTR_NOT_NULL_FATAL(c->order);
    CU_ASSERT_EQUAL(c->order[0], 1);
    CU_ASSERT_EQUAL(c->order[1], 0);

    /* The spec: the chain's fields, then what the host adds (a host whose
     * only pool is failed, PID 0x1234: no runtime is needed for that). */
    shoal_pool_spec_t specs[SHOAL_POOL_MAX_DEPTH];
    const shoal_config_pool_t *leaf = NULL;
    shoal__host_spec_chain(p, specs, &leaf);
    CU_ASSERT_PTR_EQUAL(leaf, p);
    CU_ASSERT_EQUAL(specs[0].kind, SHOAL_POOL_KIND_PULL);
    CU_ASSERT_EQUAL(specs[0].size, 3);
    CU_ASSERT_EQUAL(specs[0].prefetch, 2);
    CU_ASSERT_EQUAL(specs[0].buffer, 100);
    CU_ASSERT_EQUAL(specs[0].redeliver, 3);
    CU_ASSERT_PTR_EQUAL(specs[0].worker, p->beh);
    CU_ASSERT_PTR_NULL(specs[0].worker_pool);
    CU_ASSERT_PTR_EQUAL(specs[0].source, p->src_beh);
    shoal_host_pool_t hp = {.name = (char *)"failed", .pid = (shoal_pid_t)0x1234};
    shoal_host_t h;
    memset(&h, 0, sizeof h);
    h.pools = &hp;
    h.npools = 1;
    shoal_code_t *code = NULL;
    char why[300] = "";
    CU_ASSERT_EQUAL_FATAL(shoal__host_pull_spec(&h, p, &specs[0], &code, why, sizeof why),
                          SHOAL_OK);
    CU_ASSERT_EQUAL(specs[0].dead_letter, (shoal_pid_t)0x1234);
    const shoal_node_t *sa = specs[0].source_args;
    CU_ASSERT_PTR_NOT_NULL_FATAL(sa);
    CU_ASSERT_PTR_NOT_EQUAL(sa, p->src_args); /* a copy: it outlives the config */
    CU_ASSERT_PTR_EQUAL(sa, shoal__code_source_args(code));
    CU_ASSERT_STRING_EQUAL(shoal__node_get(sa, "target")->text, "failed");
    CU_ASSERT_STRING_EQUAL(shoal__node_get(sa, "rate")->text, "10");
    CU_ASSERT_PTR_NULL(shoal__code_args(code));
    /* The code holds the source's module: it outlives the config. */
    shoal__config_free(c);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 2);
    CU_ASSERT_STRING_EQUAL(shoal__node_get(sa, "target")->text, "failed");
    shoal__code_release(code);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 0);

    /* A forward pool's spec keeps the SDK's defaults and no dead letter;
     * a dead letter that is not running fails the start, said so. */
    CU_ASSERT_EQUAL_FATAL(resolve(L, GOOD, &c, err, sizeof err), SHOAL_OK);
    f = shoal__config_pool(c, "failed");
    shoal__host_spec_chain(f, specs, &leaf);
    CU_ASSERT_EQUAL(specs[0].kind, SHOAL_POOL_KIND_FORWARD);
    CU_ASSERT_EQUAL(specs[0].prefetch, 1);
    CU_ASSERT_EQUAL(specs[0].buffer, 1024);
    CU_ASSERT_PTR_NULL(specs[0].source);
    CU_ASSERT_EQUAL_FATAL(shoal__host_pull_spec(&h, f, &specs[0], &code, why, sizeof why),
                          SHOAL_OK);
    CU_ASSERT_EQUAL(specs[0].dead_letter, SHOAL_PID_NONE);
    CU_ASSERT_PTR_NULL(specs[0].source_args);
    shoal__code_release(code);
    h.npools = 0;
    p = shoal__config_pool(c, "jobs");
    shoal__host_spec_chain(p, specs, &leaf);
    code = (shoal_code_t *)1;
    CU_ASSERT_EQUAL(shoal__host_pull_spec(&h, p, &specs[0], &code, why, sizeof why), SHOAL_EINVAL);
    CU_ASSERT_STRING_EQUAL(why, "its dead_letter pool failed is not running");
    shoal__config_free(c);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 0);
    shoal__loader_destroy(L);
}

/* A chain of dead letters starts from its end; a pull pool may feed its
 * dead letters to another pull pool. */
static void test_order(void)
{
    shoal_config_t *c = parse_ok("plugins: {e: e.so}\npools:\n"
                                 "  a: {worker: e.echo, kind: pull, dead_letter: b}\n"
                                 "  x: {worker: e.echo}\n"
                                 "  b: {worker: e.echo, kind: pull, dead_letter: c}\n"
                                 "  c: {worker: e.echo}\n"
                                 "  d: {worker: e.echo, kind: pull, dead_letter: c}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    static const size_t want[] = {3, 2, 0, 1, 4}; /* c b a x d */
    for (size_t i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(c->order[i], want[i]);
    shoal__config_free(c);
}

/* ---- bad files ----------------------------------------------------------------- */

#define PL "plugins: {e: e.so, b: b.so}\n"
/* the key under test on line 6, column 5 */
#define PULL PL "pools:\n  jobs:\n    worker: e.echo\n    kind: pull\n"
/* ... on line 5 */
#define FWD PL "pools:\n  api:\n    worker: e.echo\n"

static void test_bad(void)
{
    static const struct {
        const char *text, *error;
    } cases[] = {
        {PULL "    prefetch: 0\n",
         F "6:15: pools.jobs.prefetch: 0 is out of range: expected 1 to 1024"},
        {PULL "    prefetch: 1025\n",
         F "6:15: pools.jobs.prefetch: 1025 is out of range: expected 1 to 1024"},
        {PULL "    buffer: 16777217\n",
         F "6:13: pools.jobs.buffer: 16777217 is out of range: expected 0 to 16777216"},
        {PULL "    redeliver: 1001\n",
         F "6:16: pools.jobs.redeliver: 1001 is out of range: expected 0 to 1000"},
        {PL "pools:\n  jobs:\n    worker: e.echo\n    kind: push\n",
         F "5:11: pools.jobs.kind: expected one of forward, pull, checkout, got 'push'"},
        /* a pull pool's keys on a forward pool, at the key */
        {FWD "    prefetch: 2\n",
         F "5:5: pools.api.prefetch: only a pull pool takes prefetch (this one is kind: forward; "
           "write kind: pull)"},
        {FWD "    source: b.burn\n",
         F "5:5: pools.api.source: only a pull pool takes source (this one is kind: forward; "
           "write kind: pull)"},
        {FWD "    kind: forward\n    buffer: 10\n",
         F "6:5: pools.api.buffer: only a pull pool takes buffer (this one is kind: forward; "
           "write kind: pull)"},
        {FWD "    dead_letter: api\n",
         F "5:5: pools.api.dead_letter: only a pull pool takes dead_letter (this one is kind: "
           "forward; write kind: pull)"},
        /* dead_letter */
        {PULL "    dead_letter: nope\n",
         F "6:18: pools.jobs.dead_letter: no pool 'nope' under pools:"},
        {PULL "    dead_letter: jobs\n",
         F "6:18: pools.jobs.dead_letter: 'jobs' is this pool itself (name another pool under "
           "pools:, or leave it out: items are then dropped, counted)"},
        {PULL "    dead_letter: feed\nsources:\n  feed: {actor: e.echo}\n",
         F "6:18: pools.jobs.dead_letter: 'feed' is a source (line 8), not a pool: name a pool "
           "under pools:"},
        {PULL "    dead_letter: [a]\n",
         F "6:18: pools.jobs.dead_letter: expected the name of a pool under pools:, got a list"},
        {PL "pools:\n  a: {worker: e.echo, kind: pull, dead_letter: b}\n"
            "  b: {worker: e.echo, kind: pull, dead_letter: c}\n"
            "  c: {worker: e.echo, kind: pull, dead_letter: a}\n",
         F "3:48: pools.a.dead_letter: a cycle of dead letters (a -> b -> c -> a): an item could "
           "go round it for ever"},
        /* a cycle the first pool only leads into: said at its first pool */
        {PL "pools:\n  x: {worker: e.echo, kind: pull, dead_letter: b}\n"
            "  b: {worker: e.echo, kind: pull, dead_letter: c}\n"
            "  c: {worker: e.echo, kind: pull, dead_letter: b}\n",
         F "4:48: pools.b.dead_letter: a cycle of dead letters (b -> c -> b): an item could go "
           "round it for ever"},
        /* nesting, isolation */
        {PL "pools:\n  jobs:\n    kind: pull\n    worker: {worker: e.echo}\n",
         F "5:13: pools.jobs.worker: a nested pool is not supported for pull pools (write "
           "PLUGIN.BEHAVIOUR)"},
        {PL "pools:\n  api:\n    worker: {worker: e.echo, kind: pull}\n",
         F "4:30: pools.api.worker.kind: a nested pool is not supported for pull pools (a pull "
           "pool goes directly under pools:)"},
        {PULL "    isolation: process\n",
         F "6:5: pools.jobs.isolation: process is not supported for pull pools (write "
           "isolation: none, or leave it out)"},
        /* strategy: forward pools' */
        {PULL "    strategy: least_loaded\n", F
         "6:5: pools.jobs.strategy: a pull pool takes no strategy (its workers take the next item "
         "when they are free)"},
        {FWD "    strategy: shortest\n",
         F "5:15: pools.api.strategy: expected one of fifo, least_loaded, round_robin, lifo, got "
           "'shortest'"},
        /* source, source_args */
        {PULL "    source: burn\n",
         F "6:13: pools.jobs.source: expected PLUGIN.BEHAVIOUR (e.g. burn.burn), got 'burn'"},
        {PULL "    source: x.gen\n", F "6:13: pools.jobs.source: no plugin 'x' under plugins:"},
        {PULL "    source_args: {a: 1}\n",
         F "6:5: pools.jobs.source_args: there is no source to give them to (add source: "
           "PLUGIN.BEHAVIOUR)"},
        {PULL "    source: b.burn\n    source_args: 3\n",
         F "7:18: pools.jobs.source_args: expected a mapping, got a value"},
        /* the key list names them */
        {FWD "    prefech: 2\n",
         F "5:5: unknown key 'prefech' in pools.api (expected one of: worker, size, min, max, "
           "mailbox, args, restart, warn_queue, isolation, kind, strategy, prefetch, buffer, "
           "redeliver, "
           "dead_letter, source, source_args, idle_timeout, max_waiting, member, init, "
           "add_member_retry, "
           "member_start_timeout, cull_interval, max_age, max_lifetime, max_lifetime_jitter, "
           "queue_max, lease, group, autoscale)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        shoal_config_t *c = (shoal_config_t *)1;
        char err[1200];
        CU_ASSERT_EQUAL(parse(cases[i].text, &c, err, sizeof err), SHOAL_EINVAL);
        CU_ASSERT_PTR_NULL(c);
        same(err, cases[i].error, cases[i].text);
    }
}

/* ---- the source resolved ------------------------------------------------------- */

#define RPULL PLUGINS "pools:\n  jobs:\n    worker: burn.burn\n    kind: pull\n"

static void test_resolve_bad(void)
{
    static const struct {
        const char *text, *error;
        int rc;
    } cases[] = {
        {RPULL "    source: loadgen.seq\n",
         F "8:13: pools.jobs.source: plugin 'loadgen' has no behaviour 'seq' (it has: loadgen)",
         SHOAL_ELOAD},
        {RPULL "    source: loadgen.loadgen\n    source_args: {target: a, rat: 10}\n",
         F "9:30: pools.jobs.source_args: unknown key 'rat' for loadgen.loadgen (it takes: "
           "target, rate, size, type, count, done, tick, call, timeout, window, group)",
         SHOAL_EINVAL},
        {RPULL "    source: loadgen.loadgen\n    source_args: {rate: 10}\n",
         F "9:18: pools.jobs.source_args: missing required key 'target' for loadgen.loadgen",
         SHOAL_EINVAL},
        /* no source_args at all: said at the pool */
        {RPULL "    source: loadgen.loadgen\n",
         F "6:5: pools.jobs.source_args: missing required key 'target' for loadgen.loadgen",
         SHOAL_EINVAL},
        {RPULL "    source: burn.burn\n    source_args: {rounds: many}\n",
         F "9:27: pools.jobs.source_args.rounds: expected an integer, got 'many'", SHOAL_EINVAL},
        /* the workers' args are checked as before, and named args */
        {RPULL "    args: {rate: 1}\n    source: burn.burn\n",
         F "8:12: pools.jobs.args: unknown key 'rate' for burn.burn (it takes: rounds, spin, skew, "
           "factor)",
         SHOAL_EINVAL},
    };
    shoal_loader_t *L = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        shoal_config_t *c = NULL;
        char err[1200];
        CU_ASSERT_EQUAL(resolve(L, cases[i].text, &c, err, sizeof err), cases[i].rc);
        CU_ASSERT_PTR_NULL(c);
        same(err, cases[i].error, cases[i].text);
    }
    CU_ASSERT_EQUAL(shoal__loader_count(L), 0); /* every reference dropped */
    shoal__loader_destroy(L);
}

/* ---- --help-config, --check ------------------------------------------------------- */

static void test_help(void)
{
    char *out = cf_help_text();
    static const char *const want[] = {
        "  kind                       forward | pull | checkout      forward          forward: ",
        "  prefetch                   integer 1..1024                1                pull only: "
        "items one worker holds at most; a reload applies it live\n",
        "  buffer                     integer 0..16777216            1024             pull only: ",
        "  redeliver                  integer 0..1000                0                pull only: ",
        "  dead_letter                NAME (a pool)                  none             pull only: ",
        "  source                     PLUGIN.BEHAVIOUR               none             pull only: ",
        "  source_args                mapping                        {}               pull only: "
        "checked against the source behaviour's args schema, given to its init\n",
        "\nPULL POOLS (kind: pull):\n",
        "Its mailbox stays: each worker's own,\n  for messages sent to that worker directly",
        "isolation: process are not supported for pull pools.\n",
        "Reload: size, prefetch and buffer are applied live; a new worker or args swaps\n",
        "replaces the pool: a new one starts\n  under the name and the old one drains",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        CU_ASSERT_PTR_NOT_NULL(strstr(out, want[i]));
        if (strstr(out, want[i]) == NULL)
            fprintf(stderr, "\n    missing: %s\n", want[i]);
    }
    free(out);
}

static void test_describe(void)
{
    shoal_config_t *c = parse_ok(PL "pools:\n  jobs:\n    worker: e.echo\n    kind: pull\n"
                                    "    size: 1\n    mailbox: unbounded\n    source: b.burn\n"
                                    "  more: {worker: e.echo, kind: pull, dead_letter: jobs, "
                                    "prefetch: 8, buffer: 0, redeliver: 2,\n"
                                    "         source: b.burn, source_args: {rounds: 1}}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    char line[600];
    shoal__config_pull_describe(&c->pools[0], line, sizeof line);
    same(line,
         "pool jobs: pull, 1 worker (e.echo), mailbox unbounded, prefetch 1, buffer 1024, "
         "redeliver 0, dead_letter none (counted failed), source b.burn",
         "jobs");
    shoal__config_pull_describe(&c->pools[1], line, sizeof line);
    same(line,
         "pool more: pull, 4 workers (e.echo), mailbox 64, prefetch 8, buffer 0, redeliver 2, "
         "dead_letter jobs, source b.burn (with source_args)",
         "more");
    shoal__config_free(c);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a valid pull pool and its spec", test_valid},
        {"dead letters start first", test_order},
        {"bad pull pools", test_bad},
        {"the source resolved", test_resolve_bad},
        {"help", test_help},
        {"--check's line", test_describe},
        {NULL, NULL},
    };
    return shoal_test_run("config_pull", cases);
}
