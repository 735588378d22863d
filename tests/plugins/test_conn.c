/* test_conn.c - plugins/conn, a connection as a checkout pool's member,
 * loaded from build/plugins/conn/conn.so by the host's loader and run in a
 * real runtime as children of a recording parent (support.h): session ids
 * counting up from 1 (none taken by a refused connect, none shared by
 * members connecting at once), uses counted by calls and casts but not by
 * stats calls, the value echoed, the connect delaying init, refused
 * connects and broken connections with their texts, seeded draws the same
 * run after run and the same as splitmix64 computed here, and bad args
 * refused by the schema (unknown keys too) and by init alike. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../../plugins/conn/conn.h"
#include "actor/actor.h"
#include "host/argcheck.h"
#include "host/loader.h"
#include "host/node.h"
#include "support.h"

static shoal_loader_t *loader;
static shoal_module_t *module;
static const shoal_behaviour_t *conn; /* the host's copy of conn.conn */

static shoal_runtime_t *rt;
static shoal_pid_t parent; /* records how the members end */

/* The args trees of the running case, freed by stop(). */
#define MAX_TREES 64
static shoal_node_t *trees[MAX_TREES];
static unsigned ntrees;

/* ---- the runtime and the members --------------------------------------------------- */

/* Two dispatcher threads, info logs kept, a recording parent. */
static void start(void)
{
    rt = shoal_test_runtime_logged(2, SHOAL_LOG_INFO);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    parent = shoal_test_recorder_spawn(rt);
}

static void stop(void)
{
    shoal_runtime_destroy(rt);
    rt = NULL;
    for (unsigned i = 0; i < ntrees; i++)
        shoal__node_free(trees[i]);
    ntrees = 0;
}

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

/* Spawns conn.conn with args (YAML text, NULL for none) as a child of the
 * recording parent. Its init may still fail: shoal_test_wait_exit says. */
static shoal_pid_t spawn(const char *args)
{
    shoal_pid_t pid = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(
        shoal__module_spawn(rt, module, parent, conn, args ? yaml(args) : NULL, 64, &pid),
        SHOAL_OK);
    return pid;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A call: returns the callee's status (or the send's error); on SHOAL_OK
 * the reply's type and payload go to *type and out (exactly `size` bytes
 * asserted). */
static int call(shoal_pid_t pid, uint32_t type, const void *data, size_t size, uint32_t *rtype,
                void *out, size_t out_size)
{
    shoal_answer_t ans;
    int rc = shoal_runtime_call(rt, pid, type, data, size, 10000, &ans);
    if (rc != SHOAL_OK)
        return rc;
    rc = ans.status;
    if (rc == SHOAL_OK) {
        *rtype = ans.type;
        CU_ASSERT_EQUAL(ans.size, out_size);
        if (ans.size == out_size)
            memcpy(out, ans.data, out_size);
    }
    shoal_answer_release(&ans);
    return rc;
}

/* A call of `type` that must be answered, as a use: its conn_reply_t. */
static conn_reply_t use(shoal_pid_t pid, uint32_t type, const void *data, size_t size)
{
    conn_reply_t r;
    uint32_t rtype = 0;
    memset(&r, 0xff, sizeof r);
    CU_ASSERT_EQUAL(call(pid, type, data, size, &rtype, &r, sizeof r), SHOAL_OK);
    CU_ASSERT_EQUAL(rtype, type);
    return r;
}

static conn_reply_t query(shoal_pid_t pid, uint64_t value)
{
    return use(pid, CONN_MSG_QUERY, &value, sizeof value);
}

static conn_stats_t stats(shoal_pid_t pid)
{
    conn_stats_t st;
    uint32_t rtype = 0;
    memset(&st, 0xff, sizeof st);
    CU_ASSERT_EQUAL(call(pid, CONN_MSG_STATS, NULL, 0, &rtype, &st, sizeof st), SHOAL_OK);
    CU_ASSERT_EQUAL(rtype, CONN_MSG_STATS);
    return st;
}

/* The member's inspect "info" must be exactly `want`. */
static void info_is(shoal_pid_t pid, const char *want)
{
    shoal_answer_t ans;
    char got[256] = "(no answer)";
    if (shoal_runtime_inspect(rt, pid, 10000, &ans) == SHOAL_OK) {
        const char *info = ans.status == SHOAL_OK ? strstr(ans.data, "\"info\":") : NULL;
        snprintf(got, sizeof got, "%s", info ? info + strlen("\"info\":") : "(no info)");
        size_t n = strlen(got);
        if (info != NULL && n > 0 && got[n - 1] == '}')
            got[n - 1] = '\0'; /* the whole answer's closing brace */
        shoal_answer_release(&ans);
    }
    CU_ASSERT_STRING_EQUAL(got, want);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "\n    info %s, want %s\n", got, want);
}

/* The log must hold the line "<pid> conn: <text>" (whole, up to its end). */
static void logged(shoal_pid_t pid, const char *text)
{
    char line[1024];
    snprintf(line, sizeof line, "<%u.%u> conn: %s\n", (unsigned)shoal__pid_slot(pid),
             (unsigned)shoal__pid_gen(pid), text);
    shoal_test_assert_logged(line);
}

/* ---- the draws, computed here (conn.h) ------------------------------------------------ */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = *s += UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Whether a member seeded `seed` has its connect refused at `permille`. */
static bool refused_by_draw(int64_t seed, uint64_t permille)
{
    uint64_t s = (uint64_t)seed;
    return splitmix64(&s) % 1000 < permille;
}

/* The use at which a member seeded `seed` breaks at `permille` within n
 * calls (its connect drew first, and was not refused), or 0. */
static unsigned breaks_by_draw(int64_t seed, uint64_t permille, unsigned n)
{
    uint64_t s = (uint64_t)seed;
    (void)splitmix64(&s);
    for (unsigned i = 1; i <= n; i++)
        if (splitmix64(&s) % 1000 < permille)
            return i;
    return 0;
}

/* ---- cases ------------------------------------------------------------------------------ */

/* The first case: no member of this conn.so connected before it. */
static void sessions_count_up_from_one(void)
{
    start();
    for (unsigned i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(stats(spawn(NULL)).session, 1 + i); /* one at a time: in order */
    /* A refused connect takes no session id. */
    shoal_pid_t refused = spawn("connect_fail_permille: 1000\n");
    CU_ASSERT_EQUAL(shoal_test_wait_exit(refused, 10.0), SHOAL_EFAILED);
    CU_ASSERT_EQUAL(stats(spawn(NULL)).session, 5);
    /* Eight connecting at once, on both threads: eight different ids,
     * the next eight. */
    shoal_pid_t pids[8];
    bool seen[8] = {false};
    for (unsigned i = 0; i < 8; i++)
        pids[i] = spawn("connect: 20ms\n");
    for (unsigned i = 0; i < 8; i++) {
        uint64_t s = stats(pids[i]).session;
        CU_ASSERT(s >= 6 && s <= 13);
        if (s >= 6 && s <= 13) {
            CU_ASSERT(!seen[s - 6]);
            seen[s - 6] = true;
        }
    }
    CU_ASSERT_EQUAL(stats(spawn(NULL)).session, 14);
    stop();
}

static void uses_count_and_values_echo(void)
{
    start();
    shoal_pid_t m = spawn(NULL);
    uint64_t s = stats(m).session;
    conn_reply_t r = query(m, 42);
    CU_ASSERT_EQUAL(r.session, s);
    CU_ASSERT_EQUAL(r.uses, 1);
    CU_ASSERT_EQUAL(r.value, 42);
    r = use(m, CONN_MSG_QUERY, NULL, 0); /* no payload: value 0 */
    CU_ASSERT_EQUAL(r.session, s);
    CU_ASSERT_EQUAL(r.uses, 2);
    CU_ASSERT_EQUAL(r.value, 0);
    /* Stats calls are not uses. */
    CU_ASSERT_EQUAL(stats(m).uses, 2);
    CU_ASSERT_EQUAL(stats(m).uses, 2);
    r = query(m, UINT64_MAX);
    CU_ASSERT_EQUAL(r.uses, 3);
    CU_ASSERT_EQUAL(r.value, UINT64_MAX);
    /* Any other type: answered like a query, under its own type; a
     * payload that is not 8 bytes is not read. */
    uint64_t v = 99;
    r = use(m, 7, &v, sizeof v);
    CU_ASSERT_EQUAL(r.session, s);
    CU_ASSERT_EQUAL(r.uses, 4);
    CU_ASSERT_EQUAL(r.value, 99);
    r = use(m, CONN_MSG_QUERY, "abcd", 4);
    CU_ASSERT_EQUAL(r.uses, 5);
    CU_ASSERT_EQUAL(r.value, 0);
    /* Casts are uses, of any type (a stats cast too); nothing comes back. */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, m, CONN_MSG_QUERY, &v, sizeof v), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, m, 5, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, m, CONN_MSG_STATS, NULL, 0), SHOAL_OK);
    conn_stats_t st = stats(m); /* after the casts: same sender, in order */
    CU_ASSERT_EQUAL(st.session, s);
    CU_ASSERT_EQUAL(st.uses, 8);
    CU_ASSERT_EQUAL(st.connect_us, 0);
    CU_ASSERT_EQUAL(query(m, 1).uses, 9);
    char want[128];
    snprintf(want, sizeof want, "{\"session\":%" PRIu64 ",\"uses\":9,\"connect_us\":0}", s);
    info_is(m, want);
    /* Another member counts its own. */
    shoal_pid_t other = spawn(NULL);
    r = query(other, 3);
    CU_ASSERT_EQUAL(r.session, s + 1);
    CU_ASSERT_EQUAL(r.uses, 1);
    CU_ASSERT_EQUAL(stats(m).uses, 9);
    CU_ASSERT_EQUAL(shoal_test_exits(), 0);
    stop();
}

static void the_connect_delays_init(void)
{
    start();
    uint64_t t0 = now_ns();
    shoal_pid_t m = spawn("connect: 50ms\n");
    CU_ASSERT_EQUAL(query(m, 1).uses, 1); /* answered once init is done */
    uint64_t t1 = now_ns();
    CU_ASSERT(t1 - t0 >= UINT64_C(50000000));
    if (t1 - t0 < UINT64_C(50000000))
        fprintf(stderr, "\n    init took %" PRIu64 " ns\n", t1 - t0);
    conn_stats_t st = stats(m);
    CU_ASSERT_EQUAL(st.connect_us, 50000);
    CU_ASSERT(st.connected_ns >= t0 + UINT64_C(50000000)); /* the same clock */
    CU_ASSERT(st.connected_ns <= t1);
    char want[128];
    snprintf(want, sizeof want, "{\"session\":%" PRIu64 ",\"uses\":1,\"connect_us\":50000}",
             st.session);
    info_is(m, want);
    /* Microseconds are kept. */
    t0 = now_ns();
    m = spawn("connect: 1500us\n");
    st = stats(m);
    CU_ASSERT(now_ns() - t0 >= UINT64_C(1500000));
    CU_ASSERT_EQUAL(st.connect_us, 1500);
    CU_ASSERT(st.connected_ns >= t0 + UINT64_C(1500000));
    stop();
}

static void refused_connects(void)
{
    start();
    shoal_pid_t m = spawn("connect_fail_permille: 1000\n");
    CU_ASSERT_EQUAL(shoal_test_wait_exit(m, 10.0), SHOAL_EFAILED);
    logged(m, "pool.yaml:1:24: args 'connect_fail_permille': connect refused (1000 per mille of "
              "connects fail)");
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, m, CONN_MSG_QUERY, NULL, 0), SHOAL_ENOPROC);
    /* Refused after the handshake. */
    uint64_t t0 = now_ns();
    m = spawn("connect: 20ms\nconnect_fail_permille: 1000\n");
    CU_ASSERT_EQUAL(shoal_test_wait_exit(m, 10.0), SHOAL_EFAILED);
    CU_ASSERT(now_ns() - t0 >= UINT64_C(20000000));
    logged(m, "pool.yaml:2:24: args 'connect_fail_permille': connect refused (1000 per mille of "
              "connects fail)");
    /* 0, given or by default, never refuses. */
    for (unsigned i = 0; i < 20; i++) {
        CU_ASSERT_EQUAL(query(spawn("connect_fail_permille: 0\n"), i).value, i);
        CU_ASSERT_EQUAL(query(spawn(NULL), i).value, i);
    }
    CU_ASSERT_EQUAL(shoal_test_exits(), 2);
    CU_ASSERT_EQUAL(shoal_test_log_count("connect refused"), 2);
    stop();
}

static void broken_connections_end_the_member(void)
{
    start();
    shoal_pid_t m = spawn("fail_permille: 1000\n");
    uint64_t s = stats(m).session; /* a stats call draws nothing */
    uint32_t rtype = 0;
    conn_reply_t r;
    CU_ASSERT_EQUAL(call(m, CONN_MSG_QUERY, NULL, 0, &rtype, &r, sizeof r), SHOAL_EFAILED);
    CU_ASSERT_EQUAL(shoal_test_wait_exit(m, 10.0), SHOAL_EFAILED);
    char text[128];
    snprintf(text, sizeof text, "connection broke after 1 use (session %" PRIu64 ")", s);
    logged(m, text);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, m, CONN_MSG_QUERY, NULL, 0), SHOAL_ENOPROC);
    /* Casts never break it: two casts, then the call breaks at use 3. */
    m = spawn("fail_permille: 1000\n");
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, m, CONN_MSG_QUERY, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, m, 9, NULL, 0), SHOAL_OK);
    conn_stats_t st = stats(m);
    CU_ASSERT_EQUAL(st.uses, 2);
    CU_ASSERT_EQUAL(call(m, 9, NULL, 0, &rtype, &r, sizeof r), SHOAL_EFAILED);
    CU_ASSERT_EQUAL(shoal_test_wait_exit(m, 10.0), SHOAL_EFAILED);
    snprintf(text, sizeof text, "connection broke after 3 uses (session %" PRIu64 ")", st.session);
    logged(m, text);
    /* 0 never breaks. */
    m = spawn("fail_permille: 0\n");
    for (unsigned i = 1; i <= 50; i++)
        CU_ASSERT_EQUAL(query(m, i).uses, i);
    CU_ASSERT_EQUAL(shoal_test_exits(), 2);
    stop();
}

/* ---- seeded draws ---------------------------------------------------------------------- */

static const int64_t seeds[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 42, -1};
#define NSEEDS (sizeof seeds / sizeof seeds[0])
#define NCALLS 20u

typedef struct outcome_s {
    unsigned broke_at[NSEEDS]; /* fail_permille 500: the use that broke, 0 if none in NCALLS */
    bool refused[NSEEDS];      /* connect_fail_permille 500 */
} outcome_t;

/* One run: each seed's member called until it breaks (or NCALLS), and
 * each seed's connect at one chance in two. */
static void run_seeds(outcome_t *out)
{
    start();
    char args[128];
    for (size_t i = 0; i < NSEEDS; i++) {
        snprintf(args, sizeof args, "fail_permille: 500\nseed: %" PRId64 "\n", seeds[i]);
        shoal_pid_t m = spawn(args);
        out->broke_at[i] = 0;
        for (unsigned n = 1; n <= NCALLS && out->broke_at[i] == 0; n++) {
            uint64_t v = n;
            uint32_t rtype = 0;
            conn_reply_t r;
            int status = call(m, CONN_MSG_QUERY, &v, sizeof v, &rtype, &r, sizeof r);
            if (status == SHOAL_OK) {
                CU_ASSERT_EQUAL(r.uses, n);
                CU_ASSERT_EQUAL(r.value, n);
            } else {
                CU_ASSERT_EQUAL(status, SHOAL_EFAILED);
                CU_ASSERT_EQUAL(shoal_test_wait_exit(m, 10.0), SHOAL_EFAILED);
                out->broke_at[i] = n;
            }
        }
        snprintf(args, sizeof args, "connect_fail_permille: 500\nseed: %" PRId64 "\n", seeds[i]);
        m = spawn(args);
        shoal_answer_t ans;
        int rc = shoal_runtime_inspect(rt, m, 10000, &ans); /* after init */
        out->refused[i] = rc != SHOAL_OK || ans.status != SHOAL_OK;
        if (rc == SHOAL_OK)
            shoal_answer_release(&ans);
        if (out->refused[i])
            CU_ASSERT_EQUAL(shoal_test_wait_exit(m, 10.0), SHOAL_EFAILED);
    }
    stop();
}

static void seeded_draws_repeat(void)
{
    outcome_t a, b;
    run_seeds(&a);
    run_seeds(&b);
    unsigned broke = 0, refused = 0;
    for (size_t i = 0; i < NSEEDS; i++) {
        unsigned want = breaks_by_draw(seeds[i], 500, NCALLS);
        bool want_refused = refused_by_draw(seeds[i], 500);
        CU_ASSERT_EQUAL(a.broke_at[i], b.broke_at[i]);
        CU_ASSERT_EQUAL(a.broke_at[i], want);
        CU_ASSERT_EQUAL(a.refused[i], b.refused[i]);
        CU_ASSERT_EQUAL(a.refused[i], want_refused);
        if (a.broke_at[i] != want || b.broke_at[i] != want)
            fprintf(stderr, "\n    seed %" PRId64 ": broke at %u and %u, want %u\n", seeds[i],
                    a.broke_at[i], b.broke_at[i], want);
        broke += a.broke_at[i] > 1; /* not all at the first call */
        refused += a.refused[i];
    }
    /* The seeds make a difference: some connects refused, some not; some
     * members survive their first call. */
    CU_ASSERT(broke > 0);
    CU_ASSERT(refused > 0 && refused < NSEEDS);
}

/* ---- args ---------------------------------------------------------------------------------- */

/* args must be refused by the schema check shoald runs (as pool "p") with
 * "p.args<rest>" - and, when `key` is not NULL, by init too, with the same
 * reason at the same place. */
static void refused(const char *args, const char *key, const char *rest)
{
    const shoal_node_t *tree = yaml(args);
    shoal_diag_t err;
    memset(&err, 0, sizeof err);
    CU_ASSERT_EQUAL(shoal__argcheck_args(conn->args, tree, tree, "p", "conn.conn", &err),
                    SHOAL_EINVAL);
    char want[600];
    snprintf(want, sizeof want, "p.args%s", rest);
    CU_ASSERT_STRING_EQUAL(err.msg, want);
    if (strcmp(err.msg, want) != 0)
        fprintf(stderr, "\n    schema: %s\n    want:   %s\n", err.msg, want);
    if (key == NULL)
        return;
    shoal_pid_t m = spawn(args);
    CU_ASSERT_EQUAL(shoal_test_wait_exit(m, 10.0), SHOAL_EINVAL);
    char line[700];
    snprintf(line, sizeof line, "pool.yaml:%u:%u: args '%s': %s", err.line, err.col, key,
             err.msg + strlen("p.args.") + strlen(key) + strlen(": "));
    logged(m, line);
}

/* args must pass the schema check; spawned (when `run`), the member lives. */
static void accepted(const char *args, bool run)
{
    const shoal_node_t *tree = yaml(args);
    shoal_diag_t err;
    memset(&err, 0, sizeof err);
    int rc = shoal__argcheck_args(conn->args, tree, tree, "p", "conn.conn", &err);
    CU_ASSERT_EQUAL(rc, SHOAL_OK);
    if (rc != SHOAL_OK)
        fprintf(stderr, "\n    schema refused %s: %s\n", args, err.msg);
    if (run)
        CU_ASSERT_EQUAL(stats(spawn(args)).uses, 0);
}

static void bad_args_are_refused(void)
{
    start();
    refused("fail_permille: 1500\n", "fail_permille",
            ".fail_permille: 1500 is out of range: expected 0 to 1000");
    refused("fail_permille: -1\n", "fail_permille",
            ".fail_permille: -1 is out of range: expected 0 to 1000");
    refused("connect_fail_permille: 1001\n", "connect_fail_permille",
            ".connect_fail_permille: 1001 is out of range: expected 0 to 1000");
    refused("connect: 2m\n", "connect", ".connect: 2m is out of range: expected 0 to 1m");
    refused("connect: 60000001us\n", "connect",
            ".connect: 60000001us is out of range: expected 0 to 1m");
    refused("connect: 50\n", "connect",
            ".connect: '50' has no unit: expected a duration like 50us, 250ms, 2s or 1m");
    refused("fail_permille: 0.5\n", "fail_permille",
            ".fail_permille: expected an integer, got '0.5'");
    refused("seed: x\n", "seed", ".seed: expected an integer, got 'x'");
    /* Unknown keys: only the schema looks at them (init reads its own). */
    refused("fail_rate: 0.5\n", NULL,
            ": unknown key 'fail_rate' for conn.conn (it takes: connect, connect_fail_permille, "
            "fail_permille, seed)");
    refused("connect: 1ms\nconnect_fail: 1\n", NULL,
            ": unknown key 'connect_fail' for conn.conn (it takes: connect, "
            "connect_fail_permille, fail_permille, seed)");
    /* The edges that pass, and the defaults as declared. */
    accepted("connect: 1m\nconnect_fail_permille: 1000\nfail_permille: 1000\n", false);
    accepted("connect: 60000000us\n", false);
    accepted("connect: 0\nconnect_fail_permille: 0\nfail_permille: 0\n", true);
    accepted("seed: -9223372036854775808\n", true);
    accepted("seed: 9223372036854775807\n", true);
    accepted("{}\n", true);
    for (const shoal_arg_spec_t *s = conn->args; s->key != NULL; s++)
        CU_ASSERT(s->def != NULL || strcmp(s->key, "seed") == 0); /* seed: the PID */
    stop();
}

int main(void)
{
    char path[PATH_MAX];
    shoal_diag_t err;
    snprintf(path, sizeof path, "%s/conn/conn.so", SHOAL_PLUGIN_DIR);
    if (shoal__loader_create(&loader) != SHOAL_OK)
        return 1;
    if (shoal__module_load(loader, path, &module, &err) != SHOAL_OK) {
        char buf[1200];
        fprintf(stderr, "test_conn: %s\n", shoal__diag_format(&err, buf, sizeof buf));
        shoal__loader_destroy(loader);
        return 1;
    }
    conn = shoal__module_behaviour(module, "conn");
    if (conn == NULL || conn->args == NULL) {
        fprintf(stderr, "test_conn: %s has no conn.conn with an args schema\n", path);
        shoal__module_release(module);
        shoal__loader_destroy(loader);
        return 1;
    }
    static const shoal_test_case_t cases[] = {
        {"session ids count up from 1", sessions_count_up_from_one}, /* first: ids from 1 */
        {"uses count, values echo", uses_count_and_values_echo},
        {"the connect delays init", the_connect_delays_init},
        {"refused connects", refused_connects},
        {"broken connections end the member", broken_connections_end_the_member},
        {"seeded draws repeat", seeded_draws_repeat},
        {"bad args are refused", bad_args_are_refused},
        {NULL, NULL},
    };
    int rc = shoal_test_run("conn", cases);
    shoal__module_release(module);
    shoal__loader_destroy(loader);
    return rc;
}
