/* test_plugins.c - the bundled plugins (plugins/<name>/), loaded through
 * the loader (host/loader.c) as the host loads them: each one's behaviour
 * checked exactly - echo's answers and echoes, burn's xs50 checksum, sleep's
 * accounting, crash's k-th message with each mode, sink's counts and its
 * priority report ticks, loadgen's exact delivery (as fast as accepted, at
 * a rate, as calls, to a name registered late) - with its stats call and
 * its inspect answer agreeing, bad args failing init with the exact
 * message and the value's file:line:col, and each plugin's args schema
 * agreeing with its init, key by key and value by value (the edges of every
 * range, every choice, the defaults).
 *
 * The .so files are found from this executable's place: it is
 * <build>/bin/test_plugins, they are <build>/plugins/<name>/<name>.so. A
 * plugin that is missing fails the test. */
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "actor/actor.h"
#include "host/argcheck.h"
#include "host/args.h"
#include "host/loader.h"
#include "host/node.h"
#include "support.h"

/* The plugins' protocol headers (plugins/<name>/<name>.h). */
#include "../../plugins/burn/burn.h"
#include "../../plugins/crash/crash.h"
#include "../../plugins/echo/echo.h"
#include "../../plugins/loadgen/loadgen.h"
#include "../../plugins/sink/sink.h"
#include "../../plugins/sleep/sleep.h"

#define STATS 0xFFFF0001u     /* every plugin's stats call */
#define SELF_TICK 0xFFFF0002u /* sink's and loadgen's private timer type */

/* ---- finding and loading the plugins ------------------------------------------- */

static char build_dir[PATH_MAX];

/* <build>, from /proc/self/exe = <build>/bin/test_plugins. */
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
static const char *const names[] = {"echo", "burn", "sleep", "crash", "sink", "loadgen"};
#define NPLUGINS (sizeof names / sizeof names[0])
static shoal_module_t *modules[NPLUGINS];

/* The module of plugin `name`, loaded once (the loader's reference is kept
 * until main ends); NULL, with a failed assertion, when it cannot be. */
static shoal_module_t *module(const char *name)
{
    for (size_t i = 0; i < NPLUGINS; i++) {
        if (strcmp(names[i], name) != 0)
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

static const shoal_node_t *yaml(const char *text)
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
static shoal_pid_t parent_pid;
static shoal_runtime_t *runtime(void);

static void done(shoal_runtime_t *rt)
{
    shoal_runtime_destroy(rt);
    for (unsigned i = 0; i < ntrees; i++)
        shoal__node_free(trees[i]);
    ntrees = 0;
}

/* ---- the parent: records how its children end --------------------------------------- */

static shoal_runtime_t *runtime(void)
{
    shoal_runtime_t *rt = shoal_test_runtime_logged(2, SHOAL_LOG_INFO);
    CU_ASSERT_PTR_NOT_NULL(rt);
    if (rt != NULL)
        parent_pid = shoal_test_recorder_spawn(rt);
    return rt;
}

/* Spawns <plugin>.<plugin> with args (YAML text, NULL for none) as a child
 * of the recording parent. */
static shoal_pid_t spawn(shoal_runtime_t *rt, const char *plugin, const char *args, uint32_t limit)
{
    shoal_module_t *m = module(plugin);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const shoal_behaviour_t *b = shoal__module_behaviour(m, plugin);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    shoal_pid_t pid = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(
        shoal__module_spawn(rt, m, parent_pid, b, args ? yaml(args) : NULL, limit, &pid), SHOAL_OK);
    return pid;
}

/* ---- calls and inspection ---------------------------------------------------------------- */

/* A call; copies the reply's payload (at most cap bytes) and returns its
 * size, or -1 on a failed call or a non-zero status (*status gets it). */
static long call(shoal_runtime_t *rt, shoal_pid_t pid, uint32_t type, const void *data, size_t size,
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
static void stats(shoal_runtime_t *rt, shoal_pid_t pid, void *st, size_t st_size)
{
    uint32_t type = 0;
    int status = 0;
    memset(st, 0xff, st_size);
    long n = call(rt, pid, STATS, NULL, 0, st, st_size, &type, &status);
    CU_ASSERT_EQUAL(status, SHOAL_OK);
    CU_ASSERT_EQUAL(type, STATS);
    CU_ASSERT_EQUAL(n, (long)st_size);
}

/* The whole inspect answer must be exactly
 * {"pid":"<pid>","behaviour":"<name>","mailbox_depth":0,"mailbox_limit":<limit>,"info":<info>} */
static void inspect_is(shoal_runtime_t *rt, shoal_pid_t pid, const char *name, const char *limit,
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
static void bad_args(shoal_runtime_t *rt, const char *plugin, const char *args, int reason,
                     const char *message)
{
    shoal_pid_t pid = spawn(rt, plugin, args, 64);
    CU_ASSERT_EQUAL(shoal_test_wait_exit(pid, 10.0), reason);
    char line[700];
    snprintf(line, sizeof line, "> %s: %s\n", plugin, message);
    shoal_test_assert_logged(line);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, 1, NULL, 0), SHOAL_ENOPROC);
}

/* ---- a peer actor: sends on command, records what comes back ------------------------------ */

#define PEER_CMD 0x70000001u

typedef struct peer_cmd_s {
    shoal_pid_t to;
    uint32_t type;
    uint64_t value;
} peer_cmd_t;

static _Atomic int peer_rc;
static atomic_int peer_sent;
static _Atomic unsigned npeer;
static _Atomic uint32_t peer_type;
static _Atomic uint64_t peer_value;
static _Atomic shoal_pid_t peer_from;

static int peer_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind != SHOAL_MSG_CAST)
        return 0;
    if (msg->type == PEER_CMD && msg->from == SHOAL_PID_NONE && msg->size == sizeof(peer_cmd_t)) {
        peer_cmd_t c;
        memcpy(&c, msg->data, sizeof c);
        atomic_store(&peer_rc, shoal_send(ctx, c.to, c.type, &c.value, sizeof c.value));
        atomic_store(&peer_sent, 1);
        return 0;
    }
    uint64_t v = 0;
    if (msg->size == sizeof v)
        memcpy(&v, msg->data, sizeof v);
    atomic_store(&peer_type, msg->type);
    atomic_store(&peer_value, v);
    atomic_store(&peer_from, msg->from);
    atomic_fetch_add(&npeer, 1);
    return 0;
}

static const shoal_behaviour_t peer = {.name = "peer", .handle_message = peer_message};

/* ---- xs50 (burn.h): the reference, computed here ------------------------------------------- */

static uint32_t xs(uint64_t v, unsigned rounds)
{
    uint32_t x = (uint32_t)(v + 1);
    for (unsigned i = 0; i < rounds; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
    }
    return x;
}

static uint32_t xs50_checksum(uint64_t n)
{
    uint32_t acc = 0;
    for (uint64_t v = 0; v < n; v++)
        acc ^= xs(v, 50);
    return acc;
}

/* ---- cases ------------------------------------------------------------------------------------
 */

static void every_plugin_loads(void)
{
    for (size_t i = 0; i < NPLUGINS; i++) {
        shoal_module_t *m = module(names[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        const shoal_plugin_t *d = shoal__module_plugin(m);
        CU_ASSERT_STRING_EQUAL(d->name, names[i]);
        CU_ASSERT_EQUAL(d->abi_major, SHOAL_ABI_MAJOR);
        CU_ASSERT_EQUAL(d->abi_minor, SHOAL_ABI_MINOR);
        /* One behaviour, named after the plugin, with every callback. */
        CU_ASSERT_PTR_NOT_NULL_FATAL(d->behaviours[0]);
        CU_ASSERT_PTR_NULL(d->behaviours[1]);
        const shoal_behaviour_t *b = shoal__module_behaviour(m, names[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b); /* the host's copy (loader.c) */
        CU_ASSERT_PTR_EQUAL(b->handle_message, d->behaviours[0]->handle_message);
        CU_ASSERT_PTR_NOT_NULL(b->init);
        CU_ASSERT_PTR_NOT_NULL(b->handle_message);
        CU_ASSERT_PTR_NOT_NULL(b->handle_call);
        CU_ASSERT_PTR_NOT_NULL(b->terminate);
        CU_ASSERT_PTR_NOT_NULL(b->inspect);
    }
}

static void echo_answers_and_echoes(void)
{
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t echo = spawn(rt, "echo", "{}", 64);

    /* A call: the same type and payload back. */
    char buf[64];
    uint32_t type = 0;
    int status = 0;
    CU_ASSERT_EQUAL(call(rt, echo, 7, "hello", 5, buf, sizeof buf, &type, &status), 5);
    CU_ASSERT_EQUAL(status, SHOAL_OK);
    CU_ASSERT_EQUAL(type, 7);
    CU_ASSERT_EQUAL(memcmp(buf, "hello", 5), 0);
    CU_ASSERT_EQUAL(call(rt, echo, 8, NULL, 0, buf, sizeof buf, &type, &status), 0);
    CU_ASSERT_EQUAL(type, 8);

    /* A message from an actor goes back to it; one from outside is only
     * counted. */
    atomic_store(&npeer, 0);
    atomic_store(&peer_sent, 0);
    shoal_pid_t p;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &peer, NULL, NULL, &p), SHOAL_OK);
    peer_cmd_t c = {.to = echo, .type = 42, .value = 0x1122334455667788u};
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, p, PEER_CMD, &c, sizeof c), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&npeer) == 1, 10.0);
    CU_ASSERT_EQUAL(atomic_load(&peer_rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&npeer), 1);
    CU_ASSERT_EQUAL(atomic_load(&peer_type), 42);
    CU_ASSERT_EQUAL(atomic_load(&peer_value), 0x1122334455667788u);
    CU_ASSERT_EQUAL(atomic_load(&peer_from), echo);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, echo, 9, "x", 1), SHOAL_OK);

    echo_stats_t st;
    stats(rt, echo, &st, sizeof st);
    CU_ASSERT_EQUAL(st.calls, 2);
    CU_ASSERT_EQUAL(st.messages, 2);
    CU_ASSERT_EQUAL(st.echoed, 1);
    CU_ASSERT_EQUAL(st.echo_refused, 0);
    inspect_is(rt, echo, "echo", "64",
               "{\"calls\":2,\"messages\":2,\"echoed\":1,\"echo_refused\":0}");

    /* `reply`: calls are answered with it. */
    shoal_pid_t pong = spawn(rt, "echo", "reply: pong\n", SHOAL_MAILBOX_UNBOUNDED);
    CU_ASSERT_EQUAL(call(rt, pong, 3, "ping", 4, buf, sizeof buf, &type, &status), 4);
    CU_ASSERT_EQUAL(type, 3);
    CU_ASSERT_EQUAL(memcmp(buf, "pong", 4), 0);
    inspect_is(rt, pong, "echo", "null",
               "{\"calls\":1,\"messages\":0,\"echoed\":0,\"echo_refused\":0}");

    bad_args(rt, "echo", "reply: [a]\n", SHOAL_EINVAL,
             "pool.yaml:1:8: args 'reply': expected a string, got a list");
    done(rt);
}

static void burn_checksum(void)
{
    /* The reference first: the spec's number for N = 1000000. */
    CU_ASSERT_EQUAL(xs50_checksum(1000000), 3111071181u);

    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t burn = spawn(rt, "burn", "rounds: 50\n", SHOAL_MAILBOX_UNBOUNDED);
    const uint64_t n = 100000;
    int bad = 0;
    for (uint64_t v = 0; v < n; v++)
        bad += shoal_runtime_send(rt, burn, 1, &v, sizeof v) != SHOAL_OK;
    CU_ASSERT_EQUAL(bad, 0);
    burn_stats_t st;
    stats(rt, burn, &st, sizeof st); /* after the casts: same sender thread, same queue */
    CU_ASSERT_EQUAL(st.count, n);
    CU_ASSERT_EQUAL(st.acc, xs50_checksum(n));
    CU_ASSERT_EQUAL(st.rounds, 50);

    /* A call: the 4-byte result under the request's type, and counted. */
    uint64_t v = SHOAL_TEST_NO_EXIT;
    uint32_t r = 0, type = 0;
    int status = 0;
    CU_ASSERT_EQUAL(call(rt, burn, 77, &v, sizeof v, &r, sizeof r, &type, &status), 4);
    CU_ASSERT_EQUAL(type, 77);
    CU_ASSERT_EQUAL(r, xs(SHOAL_TEST_NO_EXIT, 50));
    char info[128];
    snprintf(info, sizeof info, "{\"count\":%llu,\"acc\":%u,\"rounds\":50}",
             (unsigned long long)n + 1, (unsigned)(xs50_checksum(n) ^ xs(SHOAL_TEST_NO_EXIT, 50)));
    inspect_is(rt, burn, "burn", "null", info);

    /* A short payload: v is the count so far. rounds: 0 leaves v + 1. */
    shoal_pid_t zero = spawn(rt, "burn", "rounds: 0\n", 8);
    CU_ASSERT_EQUAL(call(rt, zero, 1, NULL, 0, &r, sizeof r, NULL, &status), 4);
    CU_ASSERT_EQUAL(r, 1);
    CU_ASSERT_EQUAL(call(rt, zero, 1, "ab", 2, &r, sizeof r, NULL, &status), 4);
    CU_ASSERT_EQUAL(r, 2);

    /* spin keeps microseconds: each call takes at least 2000us. */
    shoal_pid_t spin = spawn(rt, "burn", "spin: 2000us\n", 8);
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(call(rt, spin, 1, NULL, 0, &r, sizeof r, NULL, &status), 4);
    CU_ASSERT(shoal_test_now() - t0 >= 0.002);
    shoal_pid_t hour = spawn(rt, "burn", "spin: 1h\n", 8); /* the most it takes */
    inspect_is(rt, hour, "burn", "8", "{\"count\":0,\"acc\":0,\"rounds\":50}");

    bad_args(rt, "burn", "spin: 2h\n", SHOAL_EINVAL,
             "pool.yaml:1:7: args 'spin': 2h is out of range: expected 0 to 1h");
    bad_args(rt, "burn", "rounds: 5\nspin: 3600000001us\n", SHOAL_EINVAL,
             "pool.yaml:2:7: args 'spin': 3600000001us is out of range: expected 0 to 1h");
    bad_args(rt, "burn", "spin: 50\n", SHOAL_EINVAL,
             "pool.yaml:1:7: args 'spin': '50' has no unit: expected a duration like 50us, "
             "250ms, 2s or 1m");
    bad_args(rt, "burn", "rounds: -1\n", SHOAL_EINVAL,
             "pool.yaml:1:9: args 'rounds': -1 is out of range: expected 0 to 1000000000");
    done(rt);
}

static void sleep_accounts_its_naps(void)
{
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t s = spawn(rt, "sleep", "latency: 200us\n", 16);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, 5, &i, sizeof i), SHOAL_OK);
    char buf[16];
    uint32_t type = 0;
    int status = 0;
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(call(rt, s, 6, "zz", 2, buf, sizeof buf, &type, &status), 2);
    CU_ASSERT(shoal_test_now() - t0 >= 4 * 0.0002); /* three messages, then the call */
    CU_ASSERT_EQUAL(type, 6);
    CU_ASSERT_EQUAL(memcmp(buf, "zz", 2), 0);
    sleep_stats_t st;
    stats(rt, s, &st, sizeof st);
    CU_ASSERT_EQUAL(st.messages, 3);
    CU_ASSERT_EQUAL(st.calls, 1);
    CU_ASSERT_EQUAL(st.slept_us, 800);
    inspect_is(rt, s, "sleep", "16", "{\"messages\":3,\"calls\":1,\"slept_us\":800}");

    /* The default latency is 1ms; jitter adds 0 .. jitter. */
    shoal_pid_t d = spawn(rt, "sleep", NULL, 16);
    CU_ASSERT_EQUAL(call(rt, d, 6, NULL, 0, NULL, 0, NULL, &status), 0);
    stats(rt, d, &st, sizeof st);
    CU_ASSERT_EQUAL(st.slept_us, 1000);
    shoal_pid_t j = spawn(rt, "sleep", "latency: 0\njitter: 300us\n", 16);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(call(rt, j, 6, NULL, 0, NULL, 0, NULL, &status), 0);
    stats(rt, j, &st, sizeof st);
    CU_ASSERT_EQUAL(st.calls, 4);
    CU_ASSERT(st.slept_us <= 4 * 300);

    bad_args(rt, "sleep", "latency: 50\n", SHOAL_EINVAL,
             "pool.yaml:1:10: args 'latency': '50' has no unit: expected a duration like 50us, "
             "250ms, 2s or 1m");
    bad_args(rt, "sleep", "latency: 1ms\njitter: 61m\n", SHOAL_EINVAL,
             "pool.yaml:2:9: args 'jitter': 61m is out of range: expected 0 to 1h");
    bad_args(rt, "sleep", "latency: 3600000001us\n", SHOAL_EINVAL,
             "pool.yaml:1:10: args 'latency': 3600000001us is out of range: expected 0 to 1h");
    done(rt);
}

static void crash_on_the_kth(void)
{
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);

    /* panic, every 3: two messages live, the third ends it. */
    shoal_pid_t c = spawn(rt, "crash", "every: 3\nmode: panic\n", 64);
    for (int i = 0; i < 2; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, c, 5, NULL, 0), SHOAL_OK);
    crash_stats_t st;
    stats(rt, c, &st, sizeof st); /* neither counted nor fatal */
    CU_ASSERT_EQUAL(st.messages, 2);
    CU_ASSERT_EQUAL(st.calls, 0);
    CU_ASSERT_EQUAL(st.every, 3);
    CU_ASSERT_EQUAL(st.until_crash, 1);
    inspect_is(rt, c, "crash", "64", "{\"messages\":2,\"calls\":0,\"every\":3,\"until_crash\":1}");
    inspect_is(rt, c, "crash", "64", /* nor is inspect */
               "{\"messages\":2,\"calls\":0,\"every\":3,\"until_crash\":1}");
    CU_ASSERT_EQUAL(shoal_test_exit_of(c), SHOAL_TEST_NO_EXIT);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, c, 5, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_wait_exit(c, 10.0), SHOAL_EPANIC);
    shoal_test_assert_logged("> crash: panic: crash: message 3 (every 3)\n");

    /* fail, every 2, with calls: the first answered, the second fails. */
    c = spawn(rt, "crash", "every: 2\nmode: fail\n", 64);
    uint32_t type = 0;
    int status = 0;
    CU_ASSERT_EQUAL(call(rt, c, 11, "x", 1, NULL, 0, &type, &status), 0);
    CU_ASSERT_EQUAL(status, SHOAL_OK);
    CU_ASSERT_EQUAL(type, 11);
    CU_ASSERT_EQUAL(call(rt, c, 11, NULL, 0, NULL, 0, NULL, &status), -1);
    CU_ASSERT_EQUAL(status, SHOAL_EFAILED);
    CU_ASSERT_EQUAL(shoal_test_wait_exit(c, 10.0), SHOAL_EFAILED);

    /* exit, every 1 (quoted mode): the first message ends it. */
    c = spawn(rt, "crash", "every: 1\nmode: \"exit\"\n", 64);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, c, 5, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_wait_exit(c, 10.0), SHOAL_EFAILED);

    /* The default: every 10, panic. */
    c = spawn(rt, "crash", NULL, 64);
    inspect_is(rt, c, "crash", "64",
               "{\"messages\":0,\"calls\":0,\"every\":10,\"until_crash\":10}");

    bad_args(rt, "crash", "every: 3\nmode: boom\n", SHOAL_EINVAL,
             "pool.yaml:2:7: args 'mode': expected one of panic, fail, exit, got 'boom'");
    bad_args(rt, "crash", "every: 0\n", SHOAL_EINVAL,
             "pool.yaml:1:8: args 'every': 0 is out of range: expected 1 to 9223372036854775807");
    done(rt);
}

static void sink_counts_exactly(void)
{
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t s = spawn(rt, "sink", NULL, SHOAL_MAILBOX_UNBOUNDED);
    static unsigned char data[64];
    uint64_t bytes = 0;
    int bad = 0;
    for (unsigned i = 0; i < 1000; i++) {
        bad += shoal_runtime_send(rt, s, i, data, i % 50) != SHOAL_OK;
        bytes += i % 50;
    }
    CU_ASSERT_EQUAL(bad, 0);
    /* Its private tick type, from outside: work like any other message. */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, SELF_TICK, data, 8), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, s, SELF_TICK, NULL, 0), SHOAL_OK);
    /* A call counts too. */
    uint32_t type = 0;
    int status = 0;
    CU_ASSERT_EQUAL(call(rt, s, 21, data, 10, NULL, 0, &type, &status), 0);
    CU_ASSERT_EQUAL(type, 21);
    sink_stats_t st;
    stats(rt, s, &st, sizeof st);
    CU_ASSERT_EQUAL(st.messages, 1000 + 2 + 1);
    CU_ASSERT_EQUAL(st.bytes, bytes + 8 + 10);
    char info[96];
    snprintf(info, sizeof info, "{\"messages\":1003,\"bytes\":%llu}",
             (unsigned long long)bytes + 18);
    inspect_is(rt, s, "sink", "null", info);

    bad_args(rt, "sink", "report: fast\n", SHOAL_EINVAL,
             "pool.yaml:1:9: args 'report': expected a duration like 250ms, 2s or 1m, got "
             "'fast'");
    done(rt);
}

/* report: its ticks come on time and are not counted; the pending one is
 * cancelled when the sink ends. */
static void sink_reports_on_priority_ticks(void)
{
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t s = spawn(rt, "sink", "report: 20ms\n", 1);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, 1, "abc", 3), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has("> sink: 1 messages, 3 bytes (+1 in"), 10.0);
    shoal_test_assert_logged("> sink: 1 messages, 3 bytes (+1 in");
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has("> sink: 1 messages, 3 bytes (+0 in"), 10.0);
    shoal_test_assert_logged("> sink: 1 messages, 3 bytes (+0 in");
    sink_stats_t st;
    stats(rt, s, &st, sizeof st);
    CU_ASSERT_EQUAL(st.messages, 1); /* the ticks are not */
    CU_ASSERT_EQUAL(st.bytes, 3);
    inspect_is(rt, s, "sink", "1", "{\"messages\":1,\"bytes\":3}");

    /* Stopped well before its first tick: without the cancel, that tick
     * would find it gone and be counted as refused. */
    shoal_pid_t q = spawn(rt, "sink", "report: 150ms\n", 1);
    inspect_is(rt, q, "sink", "1", "{\"messages\":0,\"bytes\":0}"); /* init has run */
    uint64_t refused0 = shoal_test_stats(rt).timer_refused;
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, q), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_wait_exit(q, 10.0), SHOAL_ESHUTDOWN);
    struct timespec ts = {0, 250 * 1000000L};
    nanosleep(&ts, NULL);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).timer_refused, refused0);
    done(rt);
}

static void loadgen_delivers_exactly(void)
{
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t s = spawn(rt, "sink", NULL, SHOAL_MAILBOX_UNBOUNDED);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_register(rt, "plugins-sink", s), SHOAL_OK);

    /* As fast as accepted, 500 casts. */
    shoal_pid_t g = spawn(rt, "loadgen", "target: plugins-sink\nrate: 0\ncount: 500\n",
                          SHOAL_MAILBOX_UNBOUNDED);
    loadgen_stats_t lst;
    double end = shoal_test_now() + 10;
    do {
        shoal_test_nap();
        stats(rt, g, &lst, sizeof lst);
    } while (lst.done != 1 && shoal_test_now() < end);
    CU_ASSERT_EQUAL(lst.done, 1);
    CU_ASSERT_EQUAL(lst.sent, 500);
    sink_stats_t st;
    SHOAL_TEST_WAIT_UNTIL((stats(rt, s, &st, sizeof st), st.messages >= 500), 10.0);
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL); /* no more come */
    stats(rt, s, &st, sizeof st);
    CU_ASSERT_EQUAL(st.messages, 500);
    CU_ASSERT_EQUAL(st.bytes, 500 * 8);
    inspect_is(
        rt, g, "loadgen", "null",
        "{\"sent\":500,\"refused_full\":0,\"refused_busy\":0,\"noproc\":0,"
        "\"send_errors\":0,\"replies\":0,\"reply_errors\":0,\"timeouts\":0,"
        "\"in_flight\":0,\"throttled\":0,\"behind\":0,\"done\":1,\"room_waits\":0,\"retries\":0}");
    shoal_test_assert_logged(
        "> loadgen: done: 500 sent, 0 full, 0 busy, 0 noproc, 0 replies, 0 timeouts\n");
    CU_ASSERT_EQUAL(shoal_test_exit_of(g), SHOAL_TEST_NO_EXIT); /* done: idle stays */

    /* At a rate, on its priority ticks, then done: exit ends it normally. */
    g = spawn(rt, "loadgen",
              "target: plugins-sink\nrate: 5000\ncount: 100\ntick: 5ms\ndone: exit\n", 4);
    CU_ASSERT_EQUAL(shoal_test_wait_exit(g, 10.0), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL((stats(rt, s, &st, sizeof st), st.messages >= 600), 10.0);
    CU_ASSERT_EQUAL(st.messages, 600);

    /* Calls, 16 in flight at most: every one answered. */
    g = spawn(rt, "loadgen", "target: plugins-sink\nrate: 0\ncount: 200\ncall: true\nwindow: 16\n",
              64);
    end = shoal_test_now() + 10;
    do {
        shoal_test_nap();
        stats(rt, g, &lst, sizeof lst);
    } while (lst.done != 1 && shoal_test_now() < end);
    CU_ASSERT_EQUAL(lst.sent, 200);
    CU_ASSERT_EQUAL(lst.replies, 200);
    CU_ASSERT_EQUAL(lst.in_flight, 0);
    stats(rt, s, &st, sizeof st);
    CU_ASSERT_EQUAL(st.messages, 800);
    done(rt);
}

/* The target's name is registered late: loadgen retries on its ticks, then
 * follows the name. Into burn, the sequence numbers give the checksum. */
/* As fast as accepted into a pull pool of one burn worker with a buffer of
 * 16: every refusal (SHOAL_EBUSY) is followed by a wait for SHOAL_MSG_ROOM,
 * never by a retry, and all 3000 arrive. */
static void loadgen_waits_for_room(void)
{
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t ps;
    shoal_pool_spec_init(&ps);
    ps.name = "pulled";
    ps.kind = SHOAL_POOL_KIND_PULL;
    ps.worker = shoal__module_behaviour(module("burn"), "burn");
    ps.worker_args = yaml("rounds: 2000\n");
    ps.size = 1;
    ps.buffer = 16;
    shoal_pid_t pool;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &ps, &pool), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_register(rt, "plugins-pulled", pool), SHOAL_OK);
    shoal_pid_t g = spawn(rt, "loadgen", "target: plugins-pulled\nrate: 0\ncount: 3000\n",
                          SHOAL_MAILBOX_UNBOUNDED);
    loadgen_stats_t lst;
    double end = shoal_test_now() + 20;
    do {
        shoal_test_nap();
        stats(rt, g, &lst, sizeof lst);
    } while (lst.done != 1 && shoal_test_now() < end);
    CU_ASSERT_EQUAL(lst.done, 1);
    CU_ASSERT_EQUAL(lst.sent, 3000);
    CU_ASSERT(lst.refused_busy > 0); /* one worker cannot keep up */
    CU_ASSERT_EQUAL(lst.room_waits, lst.refused_busy);
    CU_ASSERT_EQUAL(lst.retries, 0);
    shoal_pool_stats_t st;
    SHOAL_TEST_WAIT_UNTIL(
        shoal_pool_stats(rt, pool, &st, 10000) == SHOAL_OK && st.messages_handled == 3000, 20.0);
    CU_ASSERT_EQUAL(st.messages_handled, 3000);
    CU_ASSERT_EQUAL(st.messages_unhandled, lst.refused_busy);
    done(rt);
}

static void loadgen_follows_a_late_name(void)
{
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t g = spawn(rt, "loadgen", "target: late-burn\nrate: 0\ncount: 1000\ntick: 2ms\n",
                          SHOAL_MAILBOX_UNBOUNDED);
    loadgen_stats_t lst;
    SHOAL_TEST_WAIT_UNTIL((stats(rt, g, &lst, sizeof lst), lst.noproc >= 3), 10.0);
    CU_ASSERT(lst.noproc >= 3);
    CU_ASSERT_EQUAL(lst.sent, 0);
    shoal_pid_t b = spawn(rt, "burn", NULL, SHOAL_MAILBOX_UNBOUNDED);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_register(rt, "late-burn", b), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL((stats(rt, g, &lst, sizeof lst), lst.done == 1), 10.0);
    CU_ASSERT_EQUAL(lst.sent, 1000);
    burn_stats_t bst;
    SHOAL_TEST_WAIT_UNTIL((stats(rt, b, &bst, sizeof bst), bst.count >= 1000), 10.0);
    CU_ASSERT_EQUAL(bst.count, 1000);
    CU_ASSERT_EQUAL(bst.acc, xs50_checksum(1000));
    done(rt);
}

static void loadgen_bad_args(void)
{
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    bad_args(rt, "loadgen", "rate: 0\n", SHOAL_ENOKEY,
             "pool.yaml:1:1: args: missing required key 'target'");
    bad_args(rt, "loadgen", "target: x\ndone: later\n", SHOAL_EINVAL,
             "pool.yaml:2:7: args 'done': expected one of idle, exit, got 'later'");
    bad_args(rt, "loadgen", "target: x\ntick: 0ms\n", SHOAL_EINVAL,
             "pool.yaml:2:7: args 'tick': 0ms is out of range: expected 1ms to 1m");
    bad_args(rt, "loadgen", "target: x\ntick: 2m\n", SHOAL_EINVAL,
             "pool.yaml:2:7: args 'tick': 2m is out of range: expected 1ms to 1m");
    bad_args(rt, "loadgen", "target: x\nsize: 17MiB\n", SHOAL_EINVAL,
             "pool.yaml:2:7: args 'size': 17MiB is out of range: expected 0 to 16MiB");
    bad_args(rt, "loadgen", "target: x\nrate: -5\n", SHOAL_EINVAL,
             "pool.yaml:2:7: args 'rate': -5 is out of range: expected 0 to 1000000000");
    done(rt);
}

/* ---- each plugin's args schema says what its init reads ----------------------------------- */

/* The args every probe carries besides the key under test: the other
 * required keys of the schema, each with a good value (every required key
 * of the bundled plugins is a string: loadgen's target). */
static const char *base_args(const shoal_arg_spec_t *specs, const char *except, char *buf,
                             size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (const shoal_arg_spec_t *s = specs; s->key != NULL && n < size; s++)
        if ((s->flags & SHOAL_ARG_REQUIRED) && strcmp(s->key, except) != 0)
            n += (size_t)snprintf(buf + n, size - n, "%s: nobody\n", s->key);
    return buf;
}

/* One probe: `key: value` (or only the base when value is NULL) for
 * <plugin>.<plugin>. The host's schema check and the plugin's init must
 * agree: both accept, or both refuse - and then with the same reason at the
 * same place (init logs "pool.yaml:L:C: args 'key': <reason>", the config
 * says "pool.yaml:L:C: <path>.args.key: <reason>"). A missing required key
 * only has to be refused by both: init's getter words it its own way. */
static void probe(const char *plugin, const shoal_arg_spec_t *spec, const char *value)
{
    shoal_module_t *m = module(plugin);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const shoal_behaviour_t *b = shoal__module_behaviour(m, plugin);
    char text[512], base[256];
    base_args(b->args, spec->key, base, sizeof base);
    if (value != NULL)
        snprintf(text, sizeof text, "%s%s: %s\n", base, spec->key, value);
    else
        snprintf(text, sizeof text, "%s", base[0] ? base : "{}");
    shoal_node_t *args = NULL;
    shoal_diag_t err;
    int rc = shoal__node_parse("pool.yaml", text, strlen(text), &args, &err);
    if (rc != SHOAL_OK)
        fprintf(stderr, "\n    cannot parse: %s\n", text);
    CU_ASSERT_EQUAL_FATAL(rc, SHOAL_OK);
    memset(&err, 0, sizeof err);
    int schema_rc = shoal__argcheck_args(b->args, args, args, "p", "x.y", &err);

    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal__module_spawn(rt, m, parent_pid, b, args, 64, &pid), SHOAL_OK);
    shoal_answer_t ans;
    rc = shoal_runtime_inspect(rt, pid, 10000, &ans); /* after init, if it passed */
    bool alive = rc == SHOAL_OK && ans.status == SHOAL_OK;
    if (rc == SHOAL_OK)
        shoal_answer_release(&ans);
    int init_rc = SHOAL_OK;
    if (alive) {
        shoal_runtime_stop_actor(rt, pid);
        CU_ASSERT_EQUAL(shoal_test_wait_exit(pid, 10.0), SHOAL_ESHUTDOWN);
    } else {
        init_rc = shoal_test_wait_exit(pid, 10.0);
    }
    char what[600];
    snprintf(what, sizeof what, "%s %s: %s", plugin, spec->key, value ? value : "(absent)");
    CU_ASSERT_EQUAL(schema_rc != SHOAL_OK, init_rc != SHOAL_OK);
    if ((schema_rc != SHOAL_OK) != (init_rc != SHOAL_OK)) {
        char buf[1200];
        fprintf(stderr, "\n    %s: the schema says %s, init ends with %s\n", what,
                schema_rc ? shoal__diag_format(&err, buf, sizeof buf) : "ok",
                shoal_errname(init_rc));
    }
    if (schema_rc != SHOAL_OK && init_rc != SHOAL_OK && value != NULL) {
        char line[1200], head[120];
        snprintf(head, sizeof head, "p.args.%s: ", spec->key);
        CU_ASSERT_NSTRING_EQUAL(err.msg, head, strlen(head));
        snprintf(line, sizeof line, "> %s: pool.yaml:%u:%u: args '%s': %s\n", plugin, err.line,
                 err.col, spec->key, err.msg + strlen(head));
        if (!shoal_test_log_has(line))
            fprintf(stderr, "\n    %s: init did not log the schema's reason:\n    %s", what, line);
        CU_ASSERT(shoal_test_log_has(line));
    }
    shoal_runtime_destroy(rt);
    shoal__node_free(args);
}

/* The "info" of a fresh <plugin>.<plugin> actor's inspect answer, spawned
 * with args (YAML text), into out. */
static void info_of(const char *plugin, const char *text, char *out, size_t size)
{
    shoal_module_t *m = module(plugin);
    const shoal_behaviour_t *b = shoal__module_behaviour(m, plugin);
    shoal_node_t *args = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(shoal__node_parse("pool.yaml", text, strlen(text), &args, &err),
                          SHOAL_OK);
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal__module_spawn(rt, m, parent_pid, b, args, 64, &pid), SHOAL_OK);
    shoal_answer_t ans;
    snprintf(out, size, "(no answer)");
    if (shoal_runtime_inspect(rt, pid, 10000, &ans) == SHOAL_OK) {
        const char *info = ans.status == SHOAL_OK ? strstr(ans.data, "\"info\":") : NULL;
        snprintf(out, size, "%s", info ? info : "(no info)");
        shoal_answer_release(&ans);
    }
    shoal_runtime_destroy(rt);
    shoal__node_free(args);
}

/* The default a schema shows is the one init applies: the actor looks the
 * same to inspect with the key absent and with `key: <def>`. (Only what a
 * plugin's inspect reports can differ - burn's rounds, crash's every -
 * and loadgen's counters move by themselves, so it is left out.) */
static void default_is_inits(const char *plugin, const shoal_arg_spec_t *s)
{
    char base[256], text[512], absent[1024], given[1024];
    if (s->def == NULL || strcmp(plugin, "loadgen") == 0)
        return;
    base_args(shoal__module_behaviour(module(plugin), plugin)->args, s->key, base, sizeof base);
    info_of(plugin, base[0] ? base : "{}", absent, sizeof absent);
    snprintf(text, sizeof text, "%s%s: %s\n", base, s->key, s->def);
    info_of(plugin, text, given, sizeof given);
    CU_ASSERT_STRING_EQUAL(absent, given);
    if (strcmp(absent, given) != 0)
        fprintf(stderr, "\n    %s %s: default %s is not init's: %s without it, %s with it\n",
                plugin, s->key, s->def, absent, given);
}

/* Probes one key: good and bad values of its type, the edges of its range
 * (and one past each), every choice, its default, its absence. */
static void probe_key(const char *plugin, const shoal_arg_spec_t *s)
{
    char v[64];
    bool ranged = s->min != 0 || s->max != 0;
    probe(plugin, s, NULL);
    if (s->def != NULL)
        probe(plugin, s, s->def);
    default_is_inits(plugin, s);
    switch (s->type) {
    case SHOAL_ARG_STRING:
        probe(plugin, s, "anything");
        probe(plugin, s, "[1]");
        break;
    case SHOAL_ARG_BOOL:
        probe(plugin, s, "true");
        probe(plugin, s, "false");
        probe(plugin, s, "yes");
        break;
    case SHOAL_ARG_ENUM:
        for (size_t i = 0; s->choices[i] != NULL; i++)
            probe(plugin, s, s->choices[i]);
        probe(plugin, s, "nosuch");
        break;
    case SHOAL_ARG_INT:
        probe(plugin, s, "x");
        probe(plugin, s, "1.5");
        if (!ranged)
            break;
        snprintf(v, sizeof v, "%" PRId64, s->min);
        probe(plugin, s, v);
        snprintf(v, sizeof v, "%" PRId64, s->max);
        probe(plugin, s, v);
        if (s->min != INT64_MIN) {
            snprintf(v, sizeof v, "%" PRId64, s->min - 1);
            probe(plugin, s, v);
        }
        if (s->max != INT64_MAX) {
            snprintf(v, sizeof v, "%" PRId64, s->max + 1);
            probe(plugin, s, v);
        }
        break;
    case SHOAL_ARG_DURATION:
    case SHOAL_ARG_DURATION_US:
    case SHOAL_ARG_SIZE: {
        bool duration = s->type != SHOAL_ARG_SIZE;
        const char *unit = s->type == SHOAL_ARG_DURATION ? "ms" : duration ? "us" : "B";
        probe(plugin, s, "x");
        probe(plugin, s, duration ? "5" : "5 parsecs");
        if (!ranged) {
            probe(plugin, s, "0");
            probe(plugin, s, duration ? "1h" : "1MiB");
            break;
        }
        snprintf(v, sizeof v, "%" PRId64 "%s", s->min, unit);
        probe(plugin, s, v);
        snprintf(v, sizeof v, "%" PRId64 "%s", s->max, unit);
        probe(plugin, s, v);
        if (s->min > 0) {
            snprintf(v, sizeof v, "%" PRId64 "%s", s->min - 1, unit);
            probe(plugin, s, v);
        }
        snprintf(v, sizeof v, "%" PRId64 "%s", s->max + 1, unit);
        probe(plugin, s, v);
        if (s->type == SHOAL_ARG_DURATION) { /* in microseconds: rounded up to ms */
            snprintf(v, sizeof v, "%" PRId64 "us", s->max * 1000);
            probe(plugin, s, v);
            snprintf(v, sizeof v, "%" PRId64 "us", s->max * 1000 + 1);
            probe(plugin, s, v);
        }
        if (s->type == SHOAL_ARG_DURATION_US) { /* in milliseconds */
            snprintf(v, sizeof v, "%" PRId64 "ms", s->max / 1000);
            probe(plugin, s, v);
            snprintf(v, sizeof v, "%" PRId64 "ms", s->max / 1000 + 1);
            probe(plugin, s, v);
        }
        break;
    }
    default:
        CU_FAIL("a bundled plugin declares a list or a mapping: probe it");
    }
}

static void schemas_match_init(void)
{
    for (size_t i = 0; i < NPLUGINS; i++) {
        shoal_module_t *m = module(names[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        const shoal_behaviour_t *b = shoal__module_behaviour(m, names[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b->args); /* every bundled plugin declares one */
        for (const shoal_arg_spec_t *s = b->args; s->key != NULL; s++)
            probe_key(names[i], s);
    }
}

int main(void)
{
    if (!find_build_dir()) {
        fprintf(stderr, "test_plugins: cannot read /proc/self/exe\n");
        return 1;
    }
    if (shoal__loader_create(&loader) != SHOAL_OK)
        return 1;
    static const shoal_test_case_t cases[] = {
        {"every bundled plugin loads", every_plugin_loads},
        {"echo answers and echoes", echo_answers_and_echoes},
        {"burn: the xs50 checksum", burn_checksum},
        {"sleep accounts its naps", sleep_accounts_its_naps},
        {"crash on the k-th, each mode", crash_on_the_kth},
        {"sink counts exactly", sink_counts_exactly},
        {"sink reports on priority ticks", sink_reports_on_priority_ticks},
        {"loadgen delivers exactly", loadgen_delivers_exactly},
        {"loadgen follows a name registered late", loadgen_follows_a_late_name},
        {"loadgen waits for room", loadgen_waits_for_room},
        {"loadgen bad args", loadgen_bad_args},
        {"each schema says what its init reads", schemas_match_init},
        {NULL, NULL},
    };
    int rc = shoal_test_run("plugins", cases);
    for (size_t i = 0; i < NPLUGINS; i++)
        if (modules[i] != NULL)
            shoal__module_release(modules[i]);
    shoal__loader_destroy(loader);
    return rc;
}
