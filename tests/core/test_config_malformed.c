/* test_config_malformed.c - shoald's config (host/config.c) refusing
 * malformed files: a table of them, each refused with its whole message as
 * shoal__diag_format prints it ("file:line:col: path.key: what was
 * expected"). */
#include "config_kit.h"

/* ---- malformed files ------------------------------------------------------- */

static const cf_bad_case_t bad_cases[] = {
    /* unknown keys, each section listing what it takes */
    {"bogus: 1\n", CF_F "1:1: unknown key 'bogus' at the top level (expected one of: runtime, log, "
                        "shutdown, metrics, plugins, pools, sources)"},
    /* metrics.listen: HOST:PORT, numeric */
    {"metrics: { port: 1 }\npools: {}\n",
     CF_F "1:12: unknown key 'port' in metrics (expected one of: listen)"},
    {"metrics:\n  listen: host:1\npools: {}\n", CF_F
     "2:11: metrics.listen: 'host' is not a numeric IPv4 address (names are not looked up: write "
     "e.g. 127.0.0.1, 0.0.0.0 or [::1]), got 'host:1'"},
    {"metrics: { listen: '[::1]:99999' }\npools: {}\n", CF_F
     "1:20: metrics.listen: the port '99999' is not a number in 0..65535 (0: any free port), got "
     "'[::1]:99999'"},
    {"runtime:\n  thread: 4\n", CF_F "2:3: unknown key 'thread' in runtime (expected one of: "
                                     "threads, throughput, spin, max_actors, control, max_queued, "
                                     "stall_warn, max_extra_threads, plugin_path)"},
    {"log:\n  colour: yes\n",
     CF_F "2:3: unknown key 'colour' in log (expected one of: format, level)"},
    {"shutdown: {grace: 1s}\n",
     CF_F "1:12: unknown key 'grace' in shutdown (expected one of: drain)"},
    {CF_P "    sise: 2\n", CF_F
     "5:5: unknown key 'sise' in pools.api (expected one of: worker, size, "
     "min, max, mailbox, args, restart, warn_queue, isolation, kind, strategy, prefetch, buffer, "
     "redeliver, dead_letter, source, source_args, idle_timeout, max_waiting, member, init, "
     "add_member_retry, "
     "member_start_timeout, cull_interval, max_age, max_lifetime, max_lifetime_jitter, "
     "queue_max, lease, group, autoscale)"},
    {CF_P "    restart: {max: 3, every: 1s}\n",
     CF_F "5:23: unknown key 'every' in pools.api.restart (expected one of: max, within, backoff)"},
    /* wrong types */
    {"runtime: [1, 2]\n", CF_F "1:10: runtime: expected a mapping, got a list"},
    {"log: text\n", CF_F "1:6: log: expected a mapping, got a value"},
    {"pools:\n  - api\n", CF_F "2:3: pools: expected a mapping of NAME: POOL, got a list"},
    {CF_PL "pools:\n  api: e.echo\n", CF_F "3:8: pools.api: expected a mapping, got a value"},
    {CF_P "    restart: 5\n", CF_F "5:14: pools.api.restart: expected a mapping, got a value"},
    /* BUG: config.c says ": expected a mapping, got a list" (empty path) */
    {"- a\n", CF_F "1:1: expected a mapping at the top level, got a list"},
    /* BUG: config.c says "got 'a mapping'" (the kind name in quotes) */
    {"runtime:\n  threads: {n: 4}\n",
     CF_F "2:12: runtime.threads: expected auto or an integer in 1..1024, got a mapping"},
    {"runtime:\n  throughput: [1]\n",
     CF_F "2:15: runtime.throughput: expected an integer, got a list"},
    /* runtime */
    {"runtime:\n  threads: 0\n",
     CF_F "2:12: runtime.threads: expected auto or an integer in 1..1024, got '0'"},
    {"runtime:\n  threads: 2000\n",
     CF_F "2:12: runtime.threads: expected auto or an integer in 1..1024, got '2000'"},
    {"runtime:\n  threads: many\n",
     CF_F "2:12: runtime.threads: expected auto or an integer in 1..1024, got 'many'"},
    {"runtime:\n  throughput: 0\n",
     CF_F "2:15: runtime.throughput: 0 is out of range: expected 1 to 1048576"},
    {"runtime:\n  throughput: 2000000\n",
     CF_F "2:15: runtime.throughput: 2000000 is out of range: expected 1 to 1048576"},
    {"runtime:\n  spin: 2s\n", CF_F "2:9: runtime.spin: at most 1s, got '2s'"},
    {"runtime:\n  max_actors: 8\n",
     CF_F "2:15: runtime.max_actors: 8 is out of range: expected 16 to 1073741824"},
    {"runtime:\n  control: ''\n",
     CF_F "2:12: runtime.control: expected a path, got an empty string"},
    /* a socket's path holds 107 bytes: /etc/shoal/ + 105 is 116 */
    {"runtime:\n  control: "
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxxxxx.sock\n",
     CF_F "2:12: runtime.control: the path is 116 bytes as resolved: a socket's path holds at "
          "most 107 (write a shorter one)"},
    {"runtime:\n  stall_warn: 25h\n", CF_F "2:15: runtime.stall_warn: at most 1 day, got '25h'"},
    {"runtime:\n  stall_warn: 0s\n",
     CF_F "2:15: runtime.stall_warn: must be at least 1ms, got '0s'"},
    {"runtime:\n  max_extra_threads: 1025\n",
     CF_F "2:22: runtime.max_extra_threads: expected auto or an integer in 0..1024, got '1025'"},
    {"runtime:\n  max_extra_threads: some\n",
     CF_F "2:22: runtime.max_extra_threads: expected auto or an integer in 0..1024, got 'some'"},
    /* log, shutdown: enums and durations */
    {"log:\n  format: xml\n", CF_F "2:11: log.format: expected one of text, json, got 'xml'"},
    {"log:\n  level: verbose\n",
     CF_F "2:10: log.level: expected one of error, warn, info, debug, got 'verbose'"},
    {"shutdown:\n  drain: 30\n",
     CF_F "2:10: shutdown.drain: '30' has no unit: expected a duration like 250ms, 2s or 1m"},
    {"shutdown:\n  drain: 5sec\n",
     CF_F "2:10: shutdown.drain: unknown unit in '5sec': expected a duration like 250ms, 2s or 1m"},
    {"shutdown:\n  drain: -1s\n",
     CF_F "2:10: shutdown.drain: expected a duration like 250ms, 2s or 1m, got '-1s'"},
    /* pool sizes */
    {CF_P "    size: -1\n", CF_F "5:11: pools.api.size: -1 is out of range: expected 0 to 65536"},
    {CF_P "    size: 70000\n",
     CF_F "5:11: pools.api.size: 70000 is out of range: expected 0 to 65536"},
    {CF_P "    size: 20\n    max: 10\n", CF_F "5:11: pools.api.size: 20 is above max 10"},
    {CF_P "    size: 1\n    min: 2\n", CF_F "5:11: pools.api.size: 1 is below min 2"},
    /* BUG: config.c says "3:5: pools.api.size: 4 is above max 2" (at the pool, about a size
     * nobody wrote); the offending value is max */
    {CF_P "    max: 2\n", CF_F "5:10: pools.api.max: 2 is below the default size 4"},
    /* BUG: the same for min: "3:5: pools.api.size: 4 is below min 8" */
    {CF_P "    min: 8\n", CF_F "5:10: pools.api.min: 8 is above the default size 4"},
    /* BUG: config.c says "expected an integer, got '4'" - but 4 is an integer */
    {CF_P "    size: \"4\"\n",
     CF_F "5:11: pools.api.size: expected an integer, got the string \"4\" (write numbers without "
          "quotes)"},
    /* mailbox */
    {CF_P "    mailbox: 0\n", CF_F "5:14: pools.api.mailbox: 0 would refuse every message: write a "
                                   "number >= 1, or unbounded"},
    {CF_P "    mailbox: -1\n",
     CF_F "5:14: pools.api.mailbox: expected a number in 1..1073741824 or unbounded, got '-1'"},
    {CF_P "    mailbox: lots\n",
     CF_F "5:14: pools.api.mailbox: expected a number in 1..1073741824 or unbounded, got 'lots'"},
    /* BUG: config.c says "got 'a list'" */
    {CF_P "    mailbox: [1]\n",
     CF_F "5:14: pools.api.mailbox: expected a number in 1..1073741824 or unbounded, got a list"},
    /* worker */
    {CF_PL "pools:\n  api:\n    size: 2\n",
     CF_F "4:5: pools.api: missing key 'worker' (PLUGIN.BEHAVIOUR or a pool mapping)"},
    {CF_PL "pools:\n  api:\n    worker: echo\n",
     CF_F "4:13: pools.api.worker: expected PLUGIN.BEHAVIOUR "
          "(e.g. echo.echo) or a pool mapping, got 'echo'"},
    {CF_PL "pools:\n  api:\n    worker: a.b.c\n",
     CF_F "4:13: pools.api.worker: expected PLUGIN.BEHAVIOUR (e.g. echo.echo) or a pool mapping, "
          "got 'a.b.c'"},
    {CF_PL "pools:\n  api:\n    worker: .x\n",
     CF_F "4:13: pools.api.worker: expected PLUGIN.BEHAVIOUR "
          "(e.g. echo.echo) or a pool mapping, got '.x'"},
    {CF_PL "pools:\n  api:\n    worker: [e.echo]\n",
     CF_F "4:13: pools.api.worker: expected PLUGIN.BEHAVIOUR (e.g. echo.echo) or a pool mapping, "
          "got a list"},
    {CF_PL "pools:\n  api:\n    worker: x.echo\n",
     CF_F "4:13: pools.api.worker: no plugin 'x' under plugins:"},
    /* nesting: 9 pool levels (SHOAL_POOL_MAX_DEPTH is 8); BUG: config.c names the path
     * "pools.a/worker/worker/.../worker.worker" (the nested pools' runtime names) */
    {CF_PL "pools:\n  a: {worker: {worker: {worker: {worker: {worker: {worker: {worker: {worker: "
           "{worker: e.echo}}}}}}}}}\n",
     CF_F
     "3:78: pools.a.worker.worker.worker.worker.worker.worker.worker.worker: pools nest at most 8 "
     "deep"},
    /* BUG: the same in any nested pool's message: "pools.api/worker.mailbox" */
    {CF_PL "pools:\n  api:\n    worker:\n      worker: e.echo\n      mailbox: 0\n",
     CF_F "6:16: pools.api.worker.mailbox: 0 would refuse every message: write a number >= 1, or "
          "unbounded"},
    /* names, plugins, args, restart */
    {CF_PL "pools:\n  a/b: {worker: e.echo}\n",
     CF_F "3:3: pools: 'a/b' is not a pool name (1 to 63 letters, digits, '_', '-' or '.')"},
    {CF_PL "pools:\n  '': {worker: e.echo}\n",
     CF_F "3:3: pools: '' is not a pool name (1 to 63 letters, digits, '_', '-' or '.')"},
    /* a newline or a space in a name would forge log lines and split table
     * rows and shoalctl words: refused, shown with '?' for the unprintable */
    {CF_PL "pools:\n  \"x\\ny\": {worker: e.echo}\n",
     CF_F "3:3: pools: 'x?y' is not a pool name (1 to 63 letters, digits, '_', '-' or '.')"},
    {CF_PL "pools:\n  'a b': {worker: e.echo}\n",
     CF_F "3:3: pools: 'a b' is not a pool name (1 to 63 letters, digits, '_', '-' or '.')"},
    {CF_PL "pools:\n  a012345678901234567890123456789012345678901234567890123456789012: {worker: "
           "e.echo}\n",
     CF_F "3:3: pools: 'a012345678901234567890123456789012345678901234567890123456789012' is not a "
          "pool name (1 to 63 letters, digits, '_', '-' or '.')"},
    {"plugins:\n  e: [a.so]\n",
     CF_F "2:6: plugins.e: expected the path of a .so or a plugin name, got a list"},
    {"plugins:\n  e: ''\n",
     CF_F "2:6: plugins.e: expected the path of a .so or a plugin name, got an empty string"},
    {"plugins: a.so\n",
     CF_F "1:10: plugins: expected a mapping of NAME: path or a list of names, got a value"},
    {"plugins: [echo, a/b.so]\n",
     CF_F "1:17: plugins[1]: expected a plugin name (write NAME: path for a file), got a/b.so"},
    {"plugins: [echo, [x]]\n",
     CF_F "1:17: plugins[1]: expected a plugin name (write NAME: path for a file), got a list"},
    {"plugins: [echo, echo.so]\n", CF_F "1:17: plugins[1]: 'echo' is listed twice"},
    {"runtime: {plugin_path: lib}\n",
     CF_F "1:24: runtime.plugin_path: expected a list of directories: write [lib]"},
    {"runtime: {plugin_path: [lib, '']}\n",
     CF_F "1:30: runtime.plugin_path: expected a directory, got an empty string"},
    {CF_P "    args: [1]\n", CF_F "5:11: pools.api.args: expected a mapping, got a list"},
    {CF_P "    restart: {within: 0ms}\n",
     CF_F "5:23: pools.api.restart.within: must be at least 1ms, got '0ms'"},
    {CF_P "    restart: {backoff: 0}\n",
     CF_F "5:24: pools.api.restart.backoff: must be at least 1ms, got '0'"},
    {CF_P "    restart: {max: -1}\n",
     CF_F "5:20: pools.api.restart.max: -1 is out of range: expected 0 to 1000000"},
    /* YAML-level strictness (host/node.c) */
    {CF_PL "pools:\n  api: {worker: e.echo}\n  api: {worker: e.echo}\n",
     CF_F "4:3: duplicate key 'api' (first at line 3, column 3)"},
    {"runtime:\n  threads: 2\n  threads: 3\n",
     CF_F "3:3: duplicate key 'threads' (first at line 2, column 3)"},
    {"runtime:\n  threads: !!int 4\n",
     CF_F "2:12: explicit tag 'tag:yaml.org,2002:int' is not allowed: write plain values"},
    {"log: {level: info}\n---\nlog: {level: warn}\n",
     CF_F "2:1: several YAML documents in one file: write one"},
    {"a: &a [x, x, x, x, x, x, x, x, x, x]\n"
     "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
     "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
     "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
     "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n",
     CF_F "5:36: document too large: more than 100000 nodes (aliases included)"},
    {"x: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
     CF_F "1:35: nesting deeper than 32 levels"},
    {"runtime: {threads: 4\n",
     CF_F "2:1: while parsing a flow mapping did not find expected ',' or '}'"},
};

static void test_malformed(void)
{
    size_t n = sizeof bad_cases / sizeof bad_cases[0];
    CU_ASSERT(n >= 35);
    for (size_t i = 0; i < n; i++)
        cf_refused(bad_cases[i].text, bad_cases[i].error);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"malformed files", test_malformed},
        {NULL, NULL},
    };
    return shoal_test_run("config_malformed", cases);
}
