/* test_config.c - shoald's config (host/config.c): a table of malformed
 * files, each refused with its whole message as shoal__diag_format prints it
 * ("file:line:col: path.key: what was expected"); a full valid file read into
 * every field, defaults included; paths resolved against the file's
 * directory; shoal__config_resolve against the bundled plugins
 * (SHOAL_PLUGIN_DIR/<name>/<name>.so) and the loader's fixtures
 * (SHOAL_FIXTURE_DIR); shoal__config_load from a real file; and the
 * --help-config table. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/config.h"
#include "support.h"

#ifndef SHOAL_FIXTURE_DIR
#error "SHOAL_FIXTURE_DIR must name the directory of the built fixtures"
#endif
#ifndef SHOAL_PLUGIN_DIR
#error "SHOAL_PLUGIN_DIR must name <build>/plugins"
#endif

#define FILE_NAME "/etc/shoal/t.yaml"
#define F FILE_NAME ":"

/* ---- helpers --------------------------------------------------------------- */

static void same(const char *got, const char *want, const char *text)
{
    CU_ASSERT_STRING_EQUAL(got, want);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "\n    for:  %s\n    got:  %s\n    want: %s\n", text, got, want);
}

static shoal_config_t *parse_as(const char *file, const char *text)
{
    shoal_config_t *c = NULL;
    shoal_diag_t err;
    memset(&err, 0, sizeof err);
    int rc = shoal__config_parse(file, text, strlen(text), &c, &err);
    if (rc != SHOAL_OK) {
        char buf[1200];
        fprintf(stderr, "\n    for:  %s\n    refused: %s\n", text,
                shoal__diag_format(&err, buf, sizeof buf));
    }
    CU_ASSERT_EQUAL(rc, SHOAL_OK);
    return c;
}

static shoal_config_t *parse(const char *text) { return parse_as(FILE_NAME, text); }

/* ---- malformed files ------------------------------------------------------- */

typedef struct bad_case_s {
    const char *text;
    const char *error; /* the whole formatted diag */
} bad_case_t;

/* Pools need a plugin; P declares one and starts pool `api` with a good
 * worker, so the key under test is on line 5, column 5. */
#define PL "plugins: {e: e.so}\n"
#define P PL "pools:\n  api:\n    worker: e.echo\n"

static const bad_case_t bad_cases[] = {
    /* unknown keys, each section listing what it takes */
    {"bogus: 1\n", F "1:1: unknown key 'bogus' at the top level (expected one of: runtime, log, "
                     "shutdown, metrics, plugins, pools, sources)"},
    /* metrics.listen: HOST:PORT, numeric */
    {"metrics: { port: 1 }\npools: {}\n",
     F "1:12: unknown key 'port' in metrics (expected one of: listen)"},
    {"metrics:\n  listen: host:1\npools: {}\n",
     F "2:11: metrics.listen: 'host' is not a numeric IPv4 address (names are not looked up: write "
       "e.g. 127.0.0.1, 0.0.0.0 or [::1]), got 'host:1'"},
    {"metrics: { listen: '[::1]:99999' }\npools: {}\n",
     F "1:20: metrics.listen: the port '99999' is not a number in 0..65535 (0: any free port), got "
       "'[::1]:99999'"},
    {"runtime:\n  thread: 4\n", F "2:3: unknown key 'thread' in runtime (expected one of: "
                                  "threads, throughput, spin, max_actors, control, max_queued, "
                                  "stall_warn, max_extra_threads, plugin_path)"},
    {"log:\n  colour: yes\n",
     F "2:3: unknown key 'colour' in log (expected one of: format, level)"},
    {"shutdown: {grace: 1s}\n", F "1:12: unknown key 'grace' in shutdown (expected one of: drain)"},
    {P "    sise: 2\n",
     F "5:5: unknown key 'sise' in pools.api (expected one of: worker, size, "
       "min, max, mailbox, args, restart, warn_queue, isolation, kind, strategy, prefetch, buffer, "
       "redeliver, dead_letter, source, source_args, idle_timeout, max_waiting, member, init, "
       "add_member_retry, "
       "member_start_timeout, cull_interval, max_age, max_lifetime, max_lifetime_jitter, "
       "queue_max, lease, group, autoscale)"},
    {P "    restart: {max: 3, every: 1s}\n",
     F "5:23: unknown key 'every' in pools.api.restart (expected one of: max, within, backoff)"},
    /* wrong types */
    {"runtime: [1, 2]\n", F "1:10: runtime: expected a mapping, got a list"},
    {"log: text\n", F "1:6: log: expected a mapping, got a value"},
    {"pools:\n  - api\n", F "2:3: pools: expected a mapping of NAME: POOL, got a list"},
    {PL "pools:\n  api: e.echo\n", F "3:8: pools.api: expected a mapping, got a value"},
    {P "    restart: 5\n", F "5:14: pools.api.restart: expected a mapping, got a value"},
    /* BUG: config.c says ": expected a mapping, got a list" (empty path) */
    {"- a\n", F "1:1: expected a mapping at the top level, got a list"},
    /* BUG: config.c says "got 'a mapping'" (the kind name in quotes) */
    {"runtime:\n  threads: {n: 4}\n",
     F "2:12: runtime.threads: expected auto or an integer in 1..1024, got a mapping"},
    {"runtime:\n  throughput: [1]\n",
     F "2:15: runtime.throughput: expected an integer, got a list"},
    /* runtime */
    {"runtime:\n  threads: 0\n",
     F "2:12: runtime.threads: expected auto or an integer in 1..1024, got '0'"},
    {"runtime:\n  threads: 2000\n",
     F "2:12: runtime.threads: expected auto or an integer in 1..1024, got '2000'"},
    {"runtime:\n  threads: many\n",
     F "2:12: runtime.threads: expected auto or an integer in 1..1024, got 'many'"},
    {"runtime:\n  throughput: 0\n",
     F "2:15: runtime.throughput: 0 is out of range: expected 1 to 1048576"},
    {"runtime:\n  throughput: 2000000\n",
     F "2:15: runtime.throughput: 2000000 is out of range: expected 1 to 1048576"},
    {"runtime:\n  spin: 2s\n", F "2:9: runtime.spin: at most 1s, got '2s'"},
    {"runtime:\n  max_actors: 8\n",
     F "2:15: runtime.max_actors: 8 is out of range: expected 16 to 1073741824"},
    {"runtime:\n  control: ''\n", F "2:12: runtime.control: expected a path, got an empty string"},
    {"runtime:\n  stall_warn: 25h\n", F "2:15: runtime.stall_warn: at most 1 day, got '25h'"},
    {"runtime:\n  stall_warn: 0s\n", F "2:15: runtime.stall_warn: must be at least 1ms, got '0s'"},
    {"runtime:\n  max_extra_threads: 1025\n",
     F "2:22: runtime.max_extra_threads: expected auto or an integer in 0..1024, got '1025'"},
    {"runtime:\n  max_extra_threads: some\n",
     F "2:22: runtime.max_extra_threads: expected auto or an integer in 0..1024, got 'some'"},
    /* log, shutdown: enums and durations */
    {"log:\n  format: xml\n", F "2:11: log.format: expected one of text, json, got 'xml'"},
    {"log:\n  level: verbose\n",
     F "2:10: log.level: expected one of error, warn, info, debug, got 'verbose'"},
    {"shutdown:\n  drain: 30\n",
     F "2:10: shutdown.drain: '30' has no unit: expected a duration like 250ms, 2s or 1m"},
    {"shutdown:\n  drain: 5sec\n",
     F "2:10: shutdown.drain: unknown unit in '5sec': expected a duration like 250ms, 2s or 1m"},
    {"shutdown:\n  drain: -1s\n",
     F "2:10: shutdown.drain: expected a duration like 250ms, 2s or 1m, got '-1s'"},
    /* pool sizes */
    {P "    size: -1\n", F "5:11: pools.api.size: -1 is out of range: expected 0 to 65536"},
    {P "    size: 70000\n", F "5:11: pools.api.size: 70000 is out of range: expected 0 to 65536"},
    {P "    size: 20\n    max: 10\n", F "5:11: pools.api.size: 20 is above max 10"},
    {P "    size: 1\n    min: 2\n", F "5:11: pools.api.size: 1 is below min 2"},
    /* BUG: config.c says "3:5: pools.api.size: 4 is above max 2" (at the pool, about a size
     * nobody wrote); the offending value is max */
    {P "    max: 2\n", F "5:10: pools.api.max: 2 is below the default size 4"},
    /* BUG: the same for min: "3:5: pools.api.size: 4 is below min 8" */
    {P "    min: 8\n", F "5:10: pools.api.min: 8 is above the default size 4"},
    /* BUG: config.c says "expected an integer, got '4'" - but 4 is an integer */
    {P "    size: \"4\"\n",
     F "5:11: pools.api.size: expected an integer, got the string \"4\" (write numbers without "
       "quotes)"},
    /* mailbox */
    {P "    mailbox: 0\n", F "5:14: pools.api.mailbox: 0 would refuse every message: write a "
                             "number >= 1, or unbounded"},
    {P "    mailbox: -1\n",
     F "5:14: pools.api.mailbox: expected a number in 1..1073741824 or unbounded, got '-1'"},
    {P "    mailbox: lots\n",
     F "5:14: pools.api.mailbox: expected a number in 1..1073741824 or unbounded, got 'lots'"},
    /* BUG: config.c says "got 'a list'" */
    {P "    mailbox: [1]\n",
     F "5:14: pools.api.mailbox: expected a number in 1..1073741824 or unbounded, got a list"},
    /* worker */
    {PL "pools:\n  api:\n    size: 2\n",
     F "4:5: pools.api: missing key 'worker' (PLUGIN.BEHAVIOUR or a pool mapping)"},
    {PL "pools:\n  api:\n    worker: echo\n", F "4:13: pools.api.worker: expected PLUGIN.BEHAVIOUR "
                                                "(e.g. echo.echo) or a pool mapping, got 'echo'"},
    {PL "pools:\n  api:\n    worker: a.b.c\n",
     F "4:13: pools.api.worker: expected PLUGIN.BEHAVIOUR (e.g. echo.echo) or a pool mapping, "
       "got 'a.b.c'"},
    {PL "pools:\n  api:\n    worker: .x\n", F "4:13: pools.api.worker: expected PLUGIN.BEHAVIOUR "
                                              "(e.g. echo.echo) or a pool mapping, got '.x'"},
    {PL "pools:\n  api:\n    worker: [e.echo]\n",
     F "4:13: pools.api.worker: expected PLUGIN.BEHAVIOUR (e.g. echo.echo) or a pool mapping, "
       "got a list"},
    {PL "pools:\n  api:\n    worker: x.echo\n",
     F "4:13: pools.api.worker: no plugin 'x' under plugins:"},
    /* nesting: 9 pool levels (SHOAL_POOL_MAX_DEPTH is 8); BUG: config.c names the path
     * "pools.a/worker/worker/.../worker.worker" (the nested pools' runtime names) */
    {PL "pools:\n  a: {worker: {worker: {worker: {worker: {worker: {worker: {worker: {worker: "
        "{worker: e.echo}}}}}}}}}\n",
     F
     "3:78: pools.a.worker.worker.worker.worker.worker.worker.worker.worker: pools nest at most 8 "
     "deep"},
    /* BUG: the same in any nested pool's message: "pools.api/worker.mailbox" */
    {PL "pools:\n  api:\n    worker:\n      worker: e.echo\n      mailbox: 0\n",
     F "6:16: pools.api.worker.mailbox: 0 would refuse every message: write a number >= 1, or "
       "unbounded"},
    /* names, plugins, args, restart */
    {PL "pools:\n  a/b: {worker: e.echo}\n",
     F "3:3: pools: 'a/b' is not a pool name (1 to 63 letters, digits, '_', '-' or '.')"},
    {PL "pools:\n  '': {worker: e.echo}\n",
     F "3:3: pools: '' is not a pool name (1 to 63 letters, digits, '_', '-' or '.')"},
    /* a newline or a space in a name would forge log lines and split table
     * rows and shoalctl words: refused, shown with '?' for the unprintable */
    {PL "pools:\n  \"x\\ny\": {worker: e.echo}\n",
     F "3:3: pools: 'x?y' is not a pool name (1 to 63 letters, digits, '_', '-' or '.')"},
    {PL "pools:\n  'a b': {worker: e.echo}\n",
     F "3:3: pools: 'a b' is not a pool name (1 to 63 letters, digits, '_', '-' or '.')"},
    {PL "pools:\n  a012345678901234567890123456789012345678901234567890123456789012: {worker: "
        "e.echo}\n",
     F "3:3: pools: 'a012345678901234567890123456789012345678901234567890123456789012' is not a "
       "pool name (1 to 63 letters, digits, '_', '-' or '.')"},
    {"plugins:\n  e: [a.so]\n",
     F "2:6: plugins.e: expected the path of a .so or a plugin name, got a list"},
    {"plugins:\n  e: ''\n",
     F "2:6: plugins.e: expected the path of a .so or a plugin name, got an empty string"},
    {"plugins: a.so\n",
     F "1:10: plugins: expected a mapping of NAME: path or a list of names, got a value"},
    {"plugins: [echo, a/b.so]\n",
     F "1:17: plugins[1]: expected a plugin name (write NAME: path for a file), got a/b.so"},
    {"plugins: [echo, [x]]\n",
     F "1:17: plugins[1]: expected a plugin name (write NAME: path for a file), got a list"},
    {"plugins: [echo, echo.so]\n", F "1:17: plugins[1]: 'echo' is listed twice"},
    {"runtime: {plugin_path: lib}\n",
     F "1:24: runtime.plugin_path: expected a list of directories: write [lib]"},
    {"runtime: {plugin_path: [lib, '']}\n",
     F "1:30: runtime.plugin_path: expected a directory, got an empty string"},
    {P "    args: [1]\n", F "5:11: pools.api.args: expected a mapping, got a list"},
    {P "    restart: {within: 0ms}\n",
     F "5:23: pools.api.restart.within: must be at least 1ms, got '0ms'"},
    {P "    restart: {backoff: 0}\n",
     F "5:24: pools.api.restart.backoff: must be at least 1ms, got '0'"},
    {P "    restart: {max: -1}\n",
     F "5:20: pools.api.restart.max: -1 is out of range: expected 0 to 1000000"},
    /* YAML-level strictness (host/node.c) */
    {PL "pools:\n  api: {worker: e.echo}\n  api: {worker: e.echo}\n",
     F "4:3: duplicate key 'api' (first at line 3, column 3)"},
    {"runtime:\n  threads: 2\n  threads: 3\n",
     F "3:3: duplicate key 'threads' (first at line 2, column 3)"},
    {"runtime:\n  threads: !!int 4\n",
     F "2:12: explicit tag 'tag:yaml.org,2002:int' is not allowed: write plain values"},
    {"log: {level: info}\n---\nlog: {level: warn}\n",
     F "2:1: several YAML documents in one file: write one"},
    {"a: &a [x, x, x, x, x, x, x, x, x, x]\n"
     "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
     "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
     "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
     "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n",
     F "5:36: document too large: more than 100000 nodes (aliases included)"},
    {"x: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
     F "1:35: nesting deeper than 32 levels"},
    {"runtime: {threads: 4\n",
     F "2:1: while parsing a flow mapping did not find expected ',' or '}'"},
};

static void test_malformed(void)
{
    size_t n = sizeof bad_cases / sizeof bad_cases[0];
    CU_ASSERT(n >= 35);
    for (size_t i = 0; i < n; i++) {
        const char *text = bad_cases[i].text;
        shoal_config_t *c = (shoal_config_t *)1;
        shoal_diag_t err;
        memset(&err, 0, sizeof err);
        int rc = shoal__config_parse(FILE_NAME, text, strlen(text), &c, &err);
        CU_ASSERT_EQUAL(rc, SHOAL_EINVAL);
        CU_ASSERT_PTR_NULL(c);
        if (rc == SHOAL_OK) {
            fprintf(stderr, "\n    accepted: %s\n", text);
            shoal__config_free(c);
            continue;
        }
        char buf[1200];
        same(shoal__diag_format(&err, buf, sizeof buf), bad_cases[i].error, text);
    }
}

/* ---- valid files ----------------------------------------------------------- */

static void assert_pool_defaults(const shoal_config_pool_t *p)
{
    CU_ASSERT_EQUAL(p->size, 4);
    CU_ASSERT_EQUAL(p->min_size, 1);
    CU_ASSERT_EQUAL(p->max_size, 1024);
    CU_ASSERT_EQUAL(p->mailbox, 64);
    CU_ASSERT_EQUAL(p->restart.max, 5);
    CU_ASSERT_EQUAL(p->restart.within_ms, 5000);
    CU_ASSERT_EQUAL(p->restart.backoff_ms, 100);
    CU_ASSERT_PTR_NULL(p->args);
    CU_ASSERT_PTR_NULL(p->module);
    CU_ASSERT_PTR_NULL(p->beh);
}

static void test_full(void)
{
    shoal_config_t *c = parse("runtime:\n"
                              "  threads: 3\n"
                              "  throughput: 64\n"
                              "  spin: 200us\n"
                              "  max_actors: 4096\n"
                              "  control: run/shoal.sock\n"
                              "log: {format: json, level: debug}\n"
                              "shutdown:\n"
                              "  drain: 2s\n"
                              "plugins:\n"
                              "  e: ../lib/echo.so\n"
                              "  b: /opt/shoal/burn.so\n"
                              "pools:\n"
                              "  api:\n"
                              "    worker: e.echo\n"
                              "    size: 5\n"
                              "    min: 2\n"
                              "    max: 10\n"
                              "    mailbox: 100\n"
                              "    args: {reply: pong}\n"
                              "    restart: {max: 10, within: 1m, backoff: 250ms}\n"
                              "  fanout:\n"
                              "    size: 2\n"
                              "    mailbox: unbounded\n"
                              "    worker:\n"
                              "      size: 3\n"
                              "      worker: b.burn\n"
                              "  plain: {worker: b.burn}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_STRING_EQUAL(c->file, FILE_NAME);
    CU_ASSERT_STRING_EQUAL(c->dir, "/etc/shoal");
    CU_ASSERT_EQUAL(c->runtime.threads, 3);
    CU_ASSERT_EQUAL(c->runtime.throughput, 64);
    CU_ASSERT_EQUAL(c->runtime.spin_us, 200);
    CU_ASSERT_EQUAL(c->runtime.max_actors, 4096);
    CU_ASSERT_STRING_EQUAL(c->runtime.control, "/etc/shoal/run/shoal.sock");
    CU_ASSERT_EQUAL(c->log.format, SHOAL_LOG_FORMAT_JSON);
    CU_ASSERT_EQUAL(c->log.level, SHOAL_LOG_DEBUG);
    CU_ASSERT_EQUAL(c->shutdown.drain_ms, 2000);

    CU_ASSERT_EQUAL_FATAL(c->nplugins, 2);
    CU_ASSERT_STRING_EQUAL(c->plugins[0].name, "e");
    CU_ASSERT_STRING_EQUAL(c->plugins[0].path, "/etc/shoal/../lib/echo.so");
    CU_ASSERT_EQUAL(c->plugins[0].at->line, 11);
    CU_ASSERT_EQUAL(c->plugins[0].at->col, 6);
    CU_ASSERT_STRING_EQUAL(c->plugins[1].name, "b");
    CU_ASSERT_STRING_EQUAL(c->plugins[1].path, "/opt/shoal/burn.so");
    CU_ASSERT_PTR_NULL(c->plugins[1].module);

    CU_ASSERT_EQUAL_FATAL(c->npools, 3);
    const shoal_config_pool_t *api = shoal__config_pool(c, "api");
    CU_ASSERT_PTR_EQUAL_FATAL(api, &c->pools[0]);
    CU_ASSERT_STRING_EQUAL(api->name, "api");
    CU_ASSERT_EQUAL(api->at->line, 15);
    CU_ASSERT_EQUAL(api->at->col, 5);
    CU_ASSERT_EQUAL(api->worker_at->line, 15);
    CU_ASSERT_EQUAL(api->worker_at->col, 13);
    CU_ASSERT_STRING_EQUAL(api->plugin, "e");
    CU_ASSERT_STRING_EQUAL(api->behaviour, "echo");
    CU_ASSERT_PTR_NULL(api->nested);
    CU_ASSERT_EQUAL(api->size, 5);
    CU_ASSERT_EQUAL(api->min_size, 2);
    CU_ASSERT_EQUAL(api->max_size, 10);
    CU_ASSERT_EQUAL(api->mailbox, 100);
    CU_ASSERT_EQUAL(api->restart.max, 10);
    CU_ASSERT_EQUAL(api->restart.within_ms, 60000);
    CU_ASSERT_EQUAL(api->restart.backoff_ms, 250);
    CU_ASSERT_PTR_NOT_NULL_FATAL(api->args);
    CU_ASSERT_EQUAL(api->args->kind, SHOAL_NODE_MAP);
    CU_ASSERT_STRING_EQUAL(shoal__node_get(api->args, "reply")->text, "pong");

    const shoal_config_pool_t *fan = shoal__config_pool(c, "fanout");
    CU_ASSERT_PTR_EQUAL_FATAL(fan, &c->pools[1]);
    CU_ASSERT_PTR_NULL(fan->plugin);
    CU_ASSERT_PTR_NULL(fan->behaviour);
    CU_ASSERT_EQUAL(fan->size, 2);
    CU_ASSERT_EQUAL(fan->min_size, 1);
    CU_ASSERT_EQUAL(fan->max_size, 1024);
    CU_ASSERT_EQUAL(fan->mailbox, SHOAL_MAILBOX_UNBOUNDED);
    CU_ASSERT_EQUAL(fan->worker_at->kind, SHOAL_NODE_MAP);
    const shoal_config_pool_t *inner = fan->nested;
    CU_ASSERT_PTR_NOT_NULL_FATAL(inner);
    CU_ASSERT_STRING_EQUAL(inner->name, "fanout/worker");
    CU_ASSERT_STRING_EQUAL(inner->plugin, "b");
    CU_ASSERT_STRING_EQUAL(inner->behaviour, "burn");
    CU_ASSERT_EQUAL(inner->size, 3);
    CU_ASSERT_EQUAL(inner->mailbox, 64);
    CU_ASSERT_PTR_NULL(inner->nested);

    const shoal_config_pool_t *plain = shoal__config_pool(c, "plain");
    CU_ASSERT_PTR_EQUAL_FATAL(plain, &c->pools[2]);
    assert_pool_defaults(plain);
    CU_ASSERT_PTR_NULL(shoal__config_pool(c, "nope"));
    CU_ASSERT_PTR_NULL(shoal__config_pool(c, "fanout/worker")); /* top level only */
    shoal__config_free(c);
}

static void test_defaults_and_edges(void)
{
    /* Empty, comments only, an empty document: an error (a reload of a file
     * truncated to nothing must not drain every pool). `pools: {}` says "no
     * pools": every default. */
    static const char *const empties[] = {"", "# nothing here\n", "---\n", "\n  \n# x\n"};
    for (size_t i = 0; i < 4; i++) {
        char buf[1200];
        shoal_config_t *e = NULL;
        shoal_diag_t err = {0};
        CU_ASSERT_EQUAL(shoal__config_parse(FILE_NAME, empties[i], strlen(empties[i]), &e, &err),
                        SHOAL_EINVAL);
        CU_ASSERT_PTR_NULL(e);
        same(shoal__diag_format(&err, buf, sizeof buf),
             F "1:1: the file is empty: a config declares its pools (write `pools: {}` for none)",
             empties[i]);
    }
    {
        char buf[1200];
        shoal_config_t *e = NULL;
        shoal_diag_t err = {0};
        const char *text = "runtime: {threads: 2}\n";
        CU_ASSERT_EQUAL(shoal__config_parse(FILE_NAME, text, strlen(text), &e, &err), SHOAL_EINVAL);
        same(shoal__diag_format(&err, buf, sizeof buf),
             F "1:1: missing key 'pools' at the top level (write `pools: {}` for none)", text);
    }
    {
        shoal_config_t *c = parse("pools: {}\n");
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        CU_ASSERT_EQUAL(c->runtime.threads, 0);
        CU_ASSERT_EQUAL(c->runtime.throughput, 32);
        CU_ASSERT_EQUAL(c->runtime.spin_us, 50);
        CU_ASSERT_EQUAL(c->runtime.max_actors, 0);
        CU_ASSERT_PTR_NULL(c->runtime.control);
        CU_ASSERT_EQUAL(c->runtime.stall_warn_ms, 1000);
        CU_ASSERT_EQUAL(c->runtime.max_extra_threads, SHOAL_CONFIG_AUTO);
        CU_ASSERT_EQUAL(c->log.format, SHOAL_LOG_FORMAT_TEXT);
        CU_ASSERT_EQUAL(c->log.level, SHOAL_LOG_INFO);
        CU_ASSERT_EQUAL(c->shutdown.drain_ms, 10000);
        CU_ASSERT_EQUAL(c->nplugins, 0);
        CU_ASSERT_EQUAL(c->npools, 0);
        shoal__config_free(c);
    }
    shoal__config_free(NULL);

    /* The monitor's keys: max_extra_threads 0 is none, auto as many as threads. */
    static const struct {
        const char *text;
        uint64_t warn_ms;
        uint32_t extra;
    } stalls[] = {
        {"runtime: {stall_warn: 250ms, max_extra_threads: 0}\npools: {}\n", 250, 0},
        {"runtime: {stall_warn: 24h, max_extra_threads: 3}\npools: {}\n", 86400000, 3},
        {"runtime: {max_extra_threads: auto}\npools: {}\n", 1000, SHOAL_CONFIG_AUTO},
    };
    for (size_t i = 0; i < sizeof stalls / sizeof stalls[0]; i++) {
        shoal_config_t *c = parse(stalls[i].text);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        CU_ASSERT_EQUAL(c->runtime.stall_warn_ms, stalls[i].warn_ms);
        CU_ASSERT_EQUAL(c->runtime.max_extra_threads, stalls[i].extra);
        shoal__config_free(c);
    }
    /* threads: auto; spin: 1s is the most; pools before plugins; a size above
     * 1024 raises the default max; 8 pool levels are allowed. */
    shoal_config_t *c = parse("runtime: {threads: auto, spin: 1s}\n"
                              "pools:\n"
                              "  big: {worker: e.echo, size: 2000, min: 0}\n"
                              "  deep: {worker: {worker: {worker: {worker: {worker: {worker: "
                              "{worker: {worker: e.echo}}}}}}}}\n"
                              "plugins: {e: e.so}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->runtime.threads, 0);
    CU_ASSERT_EQUAL(c->runtime.spin_us, 1000000);
    CU_ASSERT_EQUAL_FATAL(c->npools, 2);
    CU_ASSERT_EQUAL(c->pools[0].size, 2000);
    CU_ASSERT_EQUAL(c->pools[0].min_size, 0);
    CU_ASSERT_EQUAL(c->pools[0].max_size, 2000);
    unsigned levels = 0;
    const shoal_config_pool_t *p = &c->pools[1];
    for (; p->nested != NULL; p = p->nested)
        levels++;
    CU_ASSERT_EQUAL(levels + 1, SHOAL_POOL_MAX_DEPTH);
    CU_ASSERT_STRING_EQUAL(p->behaviour, "echo");
    shoal__config_free(c);
    /* Quoted strings are strings: a quoted worker, path or plugin path is
     * what it says. BUG: config.c refuses worker: 'e.echo' ("expected
     * PLUGIN.BEHAVIOUR (e.g. echo.echo) or a pool mapping, got 'e.echo'"). */
    c = parse("plugins: {e: \"./e.so\"}\nruntime: {control: 'c.sock'}\n"
              "pools: {api: {worker: 'e.echo'}}\n");
    if (c != NULL) {
        CU_ASSERT_STRING_EQUAL(c->plugins[0].path, "/etc/shoal/./e.so");
        CU_ASSERT_STRING_EQUAL(c->runtime.control, "/etc/shoal/c.sock");
        CU_ASSERT_STRING_EQUAL(c->pools[0].behaviour, "echo");
        shoal__config_free(c);
    }
}

/* Relative paths resolve against the config file's directory. */
static void test_paths(void)
{
    static const struct {
        const char *file, *path, *want;
    } cases[] = {
        {"/etc/shoal/t.yaml", "e.so", "/etc/shoal/e.so"},
        {"/etc/shoal/t.yaml", "../lib/e.so", "/etc/shoal/../lib/e.so"},
        {"/etc/shoal/t.yaml", "/opt/e.so", "/opt/e.so"},
        {"conf/t.yaml", "e.so", "conf/e.so"},
        /* Relative to the cwd, as the file is; never a bare name, which
         * dlopen would look for on the library path. */
        {"t.yaml", "e.so", "./e.so"},
        {"t.yaml", "/opt/e.so", "/opt/e.so"},
        /* BUG: config.c gives "//e.so" */
        {"/t.yaml", "e.so", "/e.so"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[200];
        snprintf(text, sizeof text, "plugins: {e: %s}\nruntime: {control: %s}\npools: {}\n",
                 cases[i].path, cases[i].path);
        shoal_config_t *c = parse_as(cases[i].file, text);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        CU_ASSERT_EQUAL_FATAL(c->nplugins, 1);
        if (strchr(cases[i].path, '/') != NULL) {
            same(c->plugins[0].path, cases[i].want, text);
        } else { /* a name, searched at resolve (test_plugin_path) */
            CU_ASSERT_PTR_NULL(c->plugins[0].path);
            CU_ASSERT_STRING_EQUAL(c->plugins[0].file, "e.so");
        }
        same(c->runtime.control, cases[i].want, text);
        shoal__config_free(c);
    }
}

/* ---- resolve ------------------------------------------------------------------- */

/* Parses `fmt` with %1$s the plugin dir and %2$s the fixture dir, under
 * FILE_NAME, and resolves it with a fresh loader. Returns resolve's code;
 * *formatted is its error. Everything is freed and the loader holds no module
 * after. If check is set it runs on the resolved config before the free. */
static int resolve(const char *fmt, char *formatted, size_t size,
                   void (*check)(shoal_config_t *, shoal_loader_t *))
{
    char text[2048];
    snprintf(text, sizeof text, fmt, SHOAL_PLUGIN_DIR, SHOAL_FIXTURE_DIR);
    shoal_config_t *c = parse(text);
    if (c == NULL)
        return SHOAL_EINVAL;
    shoal_loader_t *L = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    shoal_diag_t err;
    memset(&err, 0, sizeof err);
    int rc = shoal__config_resolve(c, L, &err);
    shoal__diag_format(&err, formatted, size);
    if (check != NULL)
        check(c, L);
    shoal__config_free(c);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 0); /* every reference dropped */
    shoal__loader_destroy(L);
    return rc;
}

static void check_resolved(shoal_config_t *c, shoal_loader_t *L)
{
    CU_ASSERT_EQUAL(shoal__loader_count(L), 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c->plugins[0].module);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c->plugins[1].module);
    const shoal_config_pool_t *a = shoal__config_pool(c, "a");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_EQUAL(a->module, c->plugins[0].module);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a->beh);
    CU_ASSERT_STRING_EQUAL(a->beh->name, "echo");
    CU_ASSERT_PTR_EQUAL(a->beh, shoal__module_behaviour(a->module, "echo"));
    const shoal_config_pool_t *n = shoal__config_pool(c, "n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(n);
    CU_ASSERT_PTR_NULL(n->module); /* the leaf holds the module */
    CU_ASSERT_PTR_NOT_NULL_FATAL(n->nested);
    CU_ASSERT_PTR_EQUAL(n->nested->module, c->plugins[1].module);
    CU_ASSERT_PTR_NOT_NULL_FATAL(n->nested->beh);
    CU_ASSERT_STRING_EQUAL(n->nested->beh->name, "burn");
}

/* Resolving twice takes no second reference (the loader count after the
 * free, in resolve(), would show it). */
static void check_resolved_twice(shoal_config_t *c, shoal_loader_t *L)
{
    shoal_diag_t err;
    CU_ASSERT_EQUAL(shoal__config_resolve(c, L, &err), SHOAL_OK);
    check_resolved(c, L);
}

#define GOOD                                                                                       \
    "plugins:\n  echo: %1$s/echo/echo.so\n  burn: %1$s/burn/burn.so\n"                             \
    "pools:\n  a:\n    worker: echo.echo\n  n:\n    worker: {worker: burn.burn}\n"

static void test_resolve_ok(void)
{
    char err[1200];
    CU_ASSERT_EQUAL(resolve(GOOD, err, sizeof err, check_resolved), SHOAL_OK);
    CU_ASSERT_EQUAL(resolve(GOOD, err, sizeof err, check_resolved_twice), SHOAL_OK);
}

static void test_resolve_errors(void)
{
    static const struct {
        const char *text, *error; /* both formats: %1$s plugin dir, %2$s fixture dir */
    } cases[] = {
        {"plugins:\n  echo: nowhere/echo.so\npools: {}\n",
         F "2:9: plugins.echo: /etc/shoal/nowhere/echo.so: plugin refused: no such file"},
        {"plugins:\n  bad: %2$s/not_elf.so\npools: {}\n",
         F "2:8: plugins.bad: %2$s/not_elf.so: plugin refused: not a shared object (not an ELF "
           "file)"},
        {"plugins:\n  echo: %1$s/echo/echo.so\n  bad: %2$s/no_behaviours.so\npools: {}\n",
         F "3:8: plugins.bad: %2$s/no_behaviours.so: plugin refused: plugin 'empty' declares no "
           "behaviours"},
        {"plugins:\n  echo: %1$s/echo/echo.so\npools:\n  a:\n    worker: echo.nope\n",
         F "5:13: pools.a.worker: plugin 'echo' has no behaviour 'nope' (it has: echo)"},
        /* BUG: config.c names the nested pool "pools.a/worker.worker" */
        {"plugins:\n  burn: %1$s/burn/burn.so\npools:\n  a:\n    worker: {worker: burn.echo}\n",
         F "5:22: pools.a.worker.worker: plugin 'burn' has no behaviour 'echo' (it has: burn)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[1200];
        /* BUG: config.h promises SHOAL_ELOAD; config.c returns SHOAL_EINVAL */
        CU_ASSERT_EQUAL(resolve(cases[i].text, err, sizeof err, NULL), SHOAL_ELOAD);
        char want[1200];
        snprintf(want, sizeof want, cases[i].error, SHOAL_PLUGIN_DIR, SHOAL_FIXTURE_DIR);
        same(err, want, cases[i].text);
    }
}

/* ---- load ------------------------------------------------------------------------ */

static void test_load(void)
{
    shoal_config_t *c = (shoal_config_t *)1;
    shoal_diag_t err;
    char buf[1200];
    CU_ASSERT_EQUAL(shoal__config_load("/nonexistent-shoal/x.yaml", &c, &err), SHOAL_ELOAD);
    CU_ASSERT_PTR_NULL(c);
    same(shoal__diag_format(&err, buf, sizeof buf),
         "/nonexistent-shoal/x.yaml: cannot read: No such file or directory", "missing file");

    char dir[] = "/tmp/shoal-test-config-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char path[PATH_MAX], want[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s/shoal.yaml", dir);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("runtime: {control: shoal.sock}\nplugins: {e: sub/echo.so}\n"
          "pools:\n  api: {worker: e.echo, size: 3}\n",
          f);
    fclose(f);
    CU_ASSERT_EQUAL(shoal__config_load(path, &c, &err), SHOAL_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_STRING_EQUAL(c->file, path);
    CU_ASSERT_STRING_EQUAL(c->dir, dir);
    snprintf(want, sizeof want, "%s/shoal.sock", dir);
    CU_ASSERT_STRING_EQUAL(c->runtime.control, want);
    snprintf(want, sizeof want, "%s/sub/echo.so", dir);
    CU_ASSERT_STRING_EQUAL(c->plugins[0].path, want);
    CU_ASSERT_EQUAL(c->pools[0].size, 3);
    shoal__config_free(c);

    /* An error names the real file. */
    f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("log:\n  level: loud\n", f);
    fclose(f);
    CU_ASSERT_EQUAL(shoal__config_load(path, &c, &err), SHOAL_EINVAL);
    CU_ASSERT_PTR_NULL(c);
    snprintf(want, sizeof want,
             "%s:2:10: log.level: expected one of error, warn, info, debug, got 'loud'", path);
    same(shoal__diag_format(&err, buf, sizeof buf), want, path);

    /* A directory (or a FIFO, whose open would wait for a writer) is not
     * read at all: only a regular file is (host/file.c). */
    c = NULL;
    CU_ASSERT_EQUAL(shoal__config_load(dir, &c, &err), SHOAL_ELOAD);
    CU_ASSERT_PTR_NULL(c);
    snprintf(want, sizeof want, "%s: not a regular file (a directory)", dir);
    same(shoal__diag_format(&err, buf, sizeof buf), want, dir);
    char fifo[600];
    snprintf(fifo, sizeof fifo, "%s/fifo.yaml", dir);
    CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
    CU_ASSERT_EQUAL(shoal__config_load(fifo, &c, &err), SHOAL_ELOAD);
    CU_ASSERT_PTR_NULL(c);
    snprintf(want, sizeof want, "%s: not a regular file (a FIFO)", fifo);
    same(shoal__diag_format(&err, buf, sizeof buf), want, fifo);
    CU_ASSERT_EQUAL(unlink(fifo), 0);
    CU_ASSERT_EQUAL(unlink(path), 0);
    CU_ASSERT_EQUAL(rmdir(dir), 0);
}

/* ---- --help-config ------------------------------------------------------------- */

static void test_help(void)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    shoal__config_help(f);
    fclose(f);
    static const char *const lines[] = {
        "shoald config (YAML). Paths are relative to the config file.\n",
        "  key                        type                           default          what\n",
        "  runtime.threads            auto | 1..1024                 auto             dispatcher "
        "threads; auto = max(online CPUs, 2)\n",
        "  runtime.spin               duration (us, ms, s), <= 1s    50us             how long an "
        "idle thread looks for work before it sleeps\n",
        "  runtime.stall_warn         duration (250ms, 2s, 1m)       1s               a handler "
        "running longer is logged and shown in status and inspect\n",
        "  runtime.max_extra_threads  auto | 0..1024                 auto             threads "
        "started while handlers are stuck; auto = threads, 0 = none\n",
        "  log.level                  error | warn | info | debug    info             error, warn, "
        "info or debug\n",
        "  shutdown.drain             duration (250ms, 2s, 1m)       10s              on "
        "SIGTERM/SIGINT, how long pools may drain; still busy then: shoald exits 3\n",
        "\nPOOL (each entry under pools:):\n",
        "  mailbox                    1.. | unbounded                64               per worker: "
        "a number >= 1, or unbounded\n",
        "  restart.within             duration (250ms, 2s, 1m)       5s               the restart "
        "window\n",
        "\nSOURCE (each entry under sources:):\n"
        "  actor                      PLUGIN.BEHAVIOUR               (required)       "
        "PLUGIN.BEHAVIOUR: one actor, spawned after every pool, stopped before they drain\n",
        "  sources                    mapping NAME: SOURCE           {}               NAME: SOURCE "
        "(singleton actors that feed pools; names distinct from pools')\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        CU_ASSERT_PTR_NOT_NULL(strstr(out, lines[i]));
        if (strstr(out, lines[i]) == NULL)
            fprintf(stderr, "\n    missing line: %s", lines[i]);
    }
    /* Every key, at the start of a row. */
    static const char *const keys[] = {"runtime",
                                       "runtime.threads",
                                       "runtime.throughput",
                                       "runtime.spin",
                                       "runtime.max_actors",
                                       "runtime.control",
                                       "runtime.plugin_path",
                                       "log",
                                       "log.format",
                                       "log.level",
                                       "shutdown",
                                       "shutdown.drain",
                                       "plugins",
                                       "pools",
                                       "worker",
                                       "size",
                                       "min",
                                       "max",
                                       "mailbox",
                                       "args",
                                       "restart",
                                       "restart.max",
                                       "restart.within",
                                       "restart.backoff"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char row[64];
        snprintf(row, sizeof row, "\n  %-24s ", keys[i]);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, row));
        if (strstr(out, row) == NULL)
            fprintf(stderr, "\n    no row for %s\n", keys[i]);
    }
    free(out);
}

/* ---- sources ----------------------------------------------------------------- */

#define SRC PL "pools:\n  api:\n    worker: e.echo\nsources:\n"

static void test_sources(void)
{
    shoal_config_t *c = parse(SRC "  load:\n    actor: e.gen\n    args: {target: api, rate: 5}\n"
                                  "    restart: {max: 3, within: 2s, backoff: 50ms}\n"
                                  "  quiet: {actor: e.idle}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->npools, 1);
    CU_ASSERT_EQUAL_FATAL(c->nsources, 2);
    const shoal_config_pool_t *s = shoal__config_source(c, "load");
    CU_ASSERT_PTR_EQUAL_FATAL(s, &c->sources[0]);
    CU_ASSERT_STRING_EQUAL(s->name, "load");
    CU_ASSERT_STRING_EQUAL(s->path, "sources.load");
    CU_ASSERT_STRING_EQUAL(s->plugin, "e");
    CU_ASSERT_STRING_EQUAL(s->behaviour, "gen");
    CU_ASSERT(s->source);
    CU_ASSERT_EQUAL(s->size, 1);
    CU_ASSERT_EQUAL(s->min_size, 1);
    CU_ASSERT_EQUAL(s->max_size, 1);
    CU_ASSERT_EQUAL(s->mailbox, 64);
    CU_ASSERT_PTR_NULL(s->nested);
    CU_ASSERT_EQUAL(s->restart.max, 3);
    CU_ASSERT_EQUAL(s->restart.within_ms, 2000);
    CU_ASSERT_EQUAL(s->restart.backoff_ms, 50);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s->args);
    CU_ASSERT_EQUAL(s->args->n, 2);
    CU_ASSERT_EQUAL(s->at->line, 7); /* the mapping under `load:` */
    const shoal_config_pool_t *q = shoal__config_source(c, "quiet");
    CU_ASSERT_PTR_EQUAL_FATAL(q, &c->sources[1]);
    CU_ASSERT_STRING_EQUAL(q->behaviour, "idle");
    CU_ASSERT_EQUAL(q->restart.max, 5); /* a pool's defaults */
    CU_ASSERT_EQUAL(q->restart.within_ms, 5000);
    CU_ASSERT_EQUAL(q->restart.backoff_ms, 100);
    CU_ASSERT_PTR_NULL(q->args);
    CU_ASSERT_PTR_NULL(shoal__config_source(c, "api")); /* a pool, not a source */
    CU_ASSERT_PTR_NULL(shoal__config_pool(c, "load"));  /* and the other way round */
    shoal__config_free(c);
    /* none, or an empty section */
    c = parse(P);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->nsources, 0);
    shoal__config_free(c);
    c = parse(P "sources: {}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->nsources, 0);
    shoal__config_free(c);

    static const bad_case_t bad[] = {
        {SRC "  api: {actor: e.gen}\n",
         F "6:3: sources.api: the name is taken by pools.api (line 4): a name is one actor, a "
           "pool or a source"},
        {SRC "  load: {worker: e.gen}\n",
         F "6:10: unknown key 'worker' in sources.load (expected one of: actor, args, restart)"},
        {SRC "  load: {args: {rate: 1}}\n",
         F "6:9: sources.load: missing key 'actor' (PLUGIN.BEHAVIOUR)"},
        {SRC "  load: {actor: {worker: e.echo}}\n",
         F "6:17: sources.load.actor: expected PLUGIN.BEHAVIOUR (e.g. loadgen.loadgen), got a "
           "mapping"},
        {SRC "  load: {actor: gen}\n",
         F "6:17: sources.load.actor: expected PLUGIN.BEHAVIOUR (e.g. loadgen.loadgen), got "
           "'gen'"},
        {SRC "  load: {actor: x.gen}\n",
         F "6:17: sources.load.actor: no plugin 'x' under plugins:"},
        {SRC "  load: {actor: e.gen, args: [1]}\n",
         F "6:30: sources.load.args: expected a mapping, got a list"},
        {SRC "  load: {actor: e.gen, restart: {max: -1}}\n",
         F "6:39: sources.load.restart.max: -1 is out of range: expected 0 to 1000000"},
        {SRC "  a/b: {actor: e.gen}\n",
         F "6:3: sources: 'a/b' is not a source name (1 to 63 letters, digits, '_', '-' or '.')"},
        {P "sources: [a, b]\n", F "5:10: sources: expected a mapping of NAME: SOURCE, got a list"},
        {P "sources:\n  load: 1\n", F "6:9: sources.load: expected a mapping, got a value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *text = bad[i].text;
        shoal_config_t *b = (shoal_config_t *)1;
        shoal_diag_t err;
        memset(&err, 0, sizeof err);
        int rc = shoal__config_parse(FILE_NAME, text, strlen(text), &b, &err);
        CU_ASSERT_EQUAL(rc, SHOAL_EINVAL);
        CU_ASSERT_PTR_NULL(b);
        if (rc == SHOAL_OK) {
            fprintf(stderr, "\n    accepted: %s\n", text);
            shoal__config_free(b);
            continue;
        }
        char buf[1200];
        same(shoal__diag_format(&err, buf, sizeof buf), bad[i].error, text);
    }
}

/* A source's behaviour is resolved, and its args checked against the
 * behaviour's schema, like a pool's. */
static void check_source_resolved(shoal_config_t *c, shoal_loader_t *L)
{
    (void)L;
    CU_ASSERT_EQUAL_FATAL(c->nsources, 1);
    CU_ASSERT_PTR_EQUAL(c->sources[0].module, c->plugins[1].module);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c->sources[0].beh);
    CU_ASSERT_STRING_EQUAL(c->sources[0].beh->name, "loadgen");
}

#define SRC_GOOD                                                                                   \
    "plugins:\n  echo: %1$s/echo/echo.so\n  loadgen: %1$s/loadgen/loadgen.so\n"                    \
    "pools:\n  a:\n    worker: echo.echo\nsources:\n  load:\n    actor: loadgen.loadgen\n"

static void test_sources_resolve(void)
{
    char err[1200];
    CU_ASSERT_EQUAL(resolve(SRC_GOOD "    args: {target: a, rate: 10}\n", err, sizeof err,
                            check_source_resolved),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(resolve(SRC_GOOD "    args: {target: a, rat: 10}\n", err, sizeof err, NULL),
                    SHOAL_EINVAL);
    same(err,
         F "10:23: sources.load.args: unknown key 'rat' for loadgen.loadgen (it takes: "
           "target, rate, size, type, count, done, tick, call, timeout, window)",
         "rat");
    CU_ASSERT_EQUAL(resolve(SRC_GOOD "    args: {rate: 10}\n", err, sizeof err, NULL),
                    SHOAL_EINVAL);
    same(err, F "10:11: sources.load.args: missing required key 'target' for loadgen.loadgen",
         "no target");
    CU_ASSERT_EQUAL(resolve("plugins:\n  echo: %1$s/echo/echo.so\npools: {}\nsources:\n  l:\n"
                            "    actor: echo.gen\n",
                            err, sizeof err, NULL),
                    SHOAL_ELOAD);
    same(err, F "6:12: sources.l.actor: plugin 'echo' has no behaviour 'gen' (it has: echo)",
         "no behaviour");
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"malformed files", test_malformed},
        {"a full file", test_full},
        {"defaults and edges", test_defaults_and_edges},
        {"paths resolve against the file", test_paths},
        {"resolve with the bundled plugins", test_resolve_ok},
        {"resolve errors", test_resolve_errors},
        {"load from a file", test_load},
        {"help", test_help},
        {"sources", test_sources},
        {"sources resolve", test_sources_resolve},
        {NULL, NULL},
    };
    return shoal_test_run("config", cases);
}
