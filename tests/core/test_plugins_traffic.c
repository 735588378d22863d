/* test_plugins_traffic.c - the bundled plugins that make and take traffic
 * (plugins/sink, plugins/loadgen), loaded through the loader as the host
 * loads them: sink's counts and its priority report ticks, loadgen's exact
 * delivery (as fast as accepted, at a rate, as calls, to a name registered
 * late, waiting for room in a pull pool) - with their stats calls and
 * inspect answers agreeing, and bad args failing init with the exact
 * message and the value's file:line:col. */
#include <string.h>
#include <time.h>

#include "plugins_kit.h"

/* The plugins' protocol headers (plugins/<name>/<name>.h). */
#include "../../plugins/burn/burn.h"
#include "../../plugins/loadgen/loadgen.h"
#include "../../plugins/sink/sink.h"

#define SELF_TICK 0xFFFF0002u /* sink's and loadgen's private timer type */

/* ---- cases ------------------------------------------------------------------------------------
 */

static void sink_counts_exactly(void)
{
    shoal_runtime_t *rt = pl_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t s = pl_spawn(rt, "sink", NULL, SHOAL_MAILBOX_UNBOUNDED);
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
    CU_ASSERT_EQUAL(pl_call(rt, s, 21, data, 10, NULL, 0, &type, &status), 0);
    CU_ASSERT_EQUAL(type, 21);
    sink_stats_t st;
    pl_stats(rt, s, &st, sizeof st);
    CU_ASSERT_EQUAL(st.messages, 1000 + 2 + 1);
    CU_ASSERT_EQUAL(st.bytes, bytes + 8 + 10);
    char info[96];
    snprintf(info, sizeof info, "{\"messages\":1003,\"bytes\":%llu}",
             (unsigned long long)bytes + 18);
    pl_inspect_is(rt, s, "sink", "null", info);

    pl_bad_args(rt, "sink", "report: fast\n", SHOAL_EINVAL,
                "pool.yaml:1:9: args 'report': expected a duration like 250ms, 2s or 1m, got "
                "'fast'");
    pl_done(rt);
}

/* report: its ticks come on time and are not counted; the pending one is
 * cancelled when the sink ends. */
static void sink_reports_on_priority_ticks(void)
{
    shoal_runtime_t *rt = pl_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t s = pl_spawn(rt, "sink", "report: 20ms\n", 1);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, 1, "abc", 3), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has("> sink: 1 messages, 3 bytes (+1 in"), 10.0);
    shoal_test_assert_logged("> sink: 1 messages, 3 bytes (+1 in");
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has("> sink: 1 messages, 3 bytes (+0 in"), 10.0);
    shoal_test_assert_logged("> sink: 1 messages, 3 bytes (+0 in");
    sink_stats_t st;
    pl_stats(rt, s, &st, sizeof st);
    CU_ASSERT_EQUAL(st.messages, 1); /* the ticks are not */
    CU_ASSERT_EQUAL(st.bytes, 3);
    pl_inspect_is(rt, s, "sink", "1", "{\"messages\":1,\"bytes\":3}");

    /* Stopped well before its first tick: without the cancel, that tick
     * would find it gone and be counted as refused. */
    shoal_pid_t q = pl_spawn(rt, "sink", "report: 150ms\n", 1);
    pl_inspect_is(rt, q, "sink", "1", "{\"messages\":0,\"bytes\":0}"); /* init has run */
    uint64_t refused0 = shoal_test_stats(rt).timer_refused;
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, q), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_wait_exit(q, 10.0), SHOAL_ESHUTDOWN);
    struct timespec ts = {0, 250 * 1000000L};
    nanosleep(&ts, NULL);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).timer_refused, refused0);
    pl_done(rt);
}

/* Polls loadgen g's stats into *lst until it is done or `seconds` pass. */
static void until_done(shoal_runtime_t *rt, shoal_pid_t g, loadgen_stats_t *lst, double seconds)
{
    double end = shoal_test_now() + seconds;
    do {
        shoal_test_nap();
        pl_stats(rt, g, lst, sizeof *lst);
    } while (lst->done != 1 && shoal_test_now() < end);
}

static void loadgen_delivers_exactly(void)
{
    shoal_runtime_t *rt = pl_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t s = pl_spawn(rt, "sink", NULL, SHOAL_MAILBOX_UNBOUNDED);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_register(rt, "plugins-sink", s), SHOAL_OK);

    /* As fast as accepted, 500 casts. */
    shoal_pid_t g = pl_spawn(rt, "loadgen", "target: plugins-sink\nrate: 0\ncount: 500\n",
                             SHOAL_MAILBOX_UNBOUNDED);
    loadgen_stats_t lst;
    until_done(rt, g, &lst, 10);
    CU_ASSERT_EQUAL(lst.done, 1);
    CU_ASSERT_EQUAL(lst.sent, 500);
    sink_stats_t st;
    SHOAL_TEST_WAIT_UNTIL((pl_stats(rt, s, &st, sizeof st), st.messages >= 500), 10.0);
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL); /* no more come */
    pl_stats(rt, s, &st, sizeof st);
    CU_ASSERT_EQUAL(st.messages, 500);
    CU_ASSERT_EQUAL(st.bytes, 500 * 8);
    pl_inspect_is(
        rt, g, "loadgen", "null",
        "{\"sent\":500,\"refused_full\":0,\"refused_busy\":0,\"noproc\":0,"
        "\"send_errors\":0,\"replies\":0,\"reply_errors\":0,\"timeouts\":0,"
        "\"in_flight\":0,\"throttled\":0,\"behind\":0,\"done\":1,\"room_waits\":0,\"retries\":0}");
    shoal_test_assert_logged(
        "> loadgen: done: 500 sent, 0 full, 0 busy, 0 noproc, 0 send errors, 0 replies, 0 reply "
        "errors, 0 timeouts\n");
    CU_ASSERT_EQUAL(shoal_test_exit_of(g), SHOAL_TEST_NO_EXIT); /* done: idle stays */

    /* At a rate, on its priority ticks, then done: exit ends it normally. */
    g = pl_spawn(rt, "loadgen",
                 "target: plugins-sink\nrate: 5000\ncount: 100\ntick: 5ms\ndone: exit\n", 4);
    CU_ASSERT_EQUAL(shoal_test_wait_exit(g, 10.0), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL((pl_stats(rt, s, &st, sizeof st), st.messages >= 600), 10.0);
    CU_ASSERT_EQUAL(st.messages, 600);

    /* Calls, 16 in flight at most: every one answered. */
    g = pl_spawn(rt, "loadgen",
                 "target: plugins-sink\nrate: 0\ncount: 200\ncall: true\nwindow: 16\n", 64);
    until_done(rt, g, &lst, 10);
    CU_ASSERT_EQUAL(lst.sent, 200);
    CU_ASSERT_EQUAL(lst.replies, 200);
    CU_ASSERT_EQUAL(lst.in_flight, 0);
    pl_stats(rt, s, &st, sizeof st);
    CU_ASSERT_EQUAL(st.messages, 800);
    pl_done(rt);
}

/* The target's name is registered late: loadgen retries on its ticks, then
 * follows the name. Into burn, the sequence numbers give the checksum. */
/* As fast as accepted into a pull pool of one burn worker with a buffer of
 * 16: every refusal (SHOAL_EBUSY) is followed by a wait for SHOAL_MSG_ROOM,
 * never by a retry, and all 3000 arrive. */
static void loadgen_waits_for_room(void)
{
    shoal_runtime_t *rt = pl_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t ps;
    shoal_pool_spec_init(&ps);
    ps.name = "pulled";
    ps.kind = SHOAL_POOL_KIND_PULL;
    ps.worker = shoal__module_behaviour(pl_module("burn"), "burn");
    ps.worker_args = pl_yaml("rounds: 2000\n");
    ps.size = 1;
    ps.buffer = 16;
    shoal_pid_t pool;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &ps, &pool), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_register(rt, "plugins-pulled", pool), SHOAL_OK);
    shoal_pid_t g = pl_spawn(rt, "loadgen", "target: plugins-pulled\nrate: 0\ncount: 3000\n",
                             SHOAL_MAILBOX_UNBOUNDED);
    loadgen_stats_t lst;
    until_done(rt, g, &lst, 20);
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
    pl_done(rt);
}

static void loadgen_follows_a_late_name(void)
{
    shoal_runtime_t *rt = pl_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t g = pl_spawn(rt, "loadgen", "target: late-burn\nrate: 0\ncount: 1000\ntick: 2ms\n",
                             SHOAL_MAILBOX_UNBOUNDED);
    loadgen_stats_t lst;
    SHOAL_TEST_WAIT_UNTIL((pl_stats(rt, g, &lst, sizeof lst), lst.noproc >= 3), 10.0);
    CU_ASSERT(lst.noproc >= 3);
    CU_ASSERT_EQUAL(lst.sent, 0);
    shoal_pid_t b = pl_spawn(rt, "burn", NULL, SHOAL_MAILBOX_UNBOUNDED);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_register(rt, "late-burn", b), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL((pl_stats(rt, g, &lst, sizeof lst), lst.done == 1), 10.0);
    CU_ASSERT_EQUAL(lst.sent, 1000);
    burn_stats_t bst;
    SHOAL_TEST_WAIT_UNTIL((pl_stats(rt, b, &bst, sizeof bst), bst.count >= 1000), 10.0);
    CU_ASSERT_EQUAL(bst.count, 1000);
    CU_ASSERT_EQUAL(bst.acc, pl_xs50_checksum(1000));
    pl_done(rt);
}

static void loadgen_bad_args(void)
{
    shoal_runtime_t *rt = pl_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    pl_bad_args(rt, "loadgen", "rate: 0\n", SHOAL_ENOKEY,
                "pool.yaml:1:1: args: missing required key 'target'");
    pl_bad_args(rt, "loadgen", "target: x\ndone: later\n", SHOAL_EINVAL,
                "pool.yaml:2:7: args 'done': expected one of idle, exit, got 'later'");
    pl_bad_args(rt, "loadgen", "target: x\ntick: 0ms\n", SHOAL_EINVAL,
                "pool.yaml:2:7: args 'tick': 0ms is out of range: expected 1ms to 1m");
    pl_bad_args(rt, "loadgen", "target: x\ntick: 2m\n", SHOAL_EINVAL,
                "pool.yaml:2:7: args 'tick': 2m is out of range: expected 1ms to 1m");
    pl_bad_args(rt, "loadgen", "target: x\nsize: 17MiB\n", SHOAL_EINVAL,
                "pool.yaml:2:7: args 'size': 17MiB is out of range: expected 0 to 16MiB");
    pl_bad_args(rt, "loadgen", "target: x\nrate: -5\n", SHOAL_EINVAL,
                "pool.yaml:2:7: args 'rate': -5 is out of range: expected 0 to 1000000000");
    pl_done(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"sink counts exactly", sink_counts_exactly},
        {"sink reports on priority ticks", sink_reports_on_priority_ticks},
        {"loadgen delivers exactly", loadgen_delivers_exactly},
        {"loadgen follows a name registered late", loadgen_follows_a_late_name},
        {"loadgen waits for room", loadgen_waits_for_room},
        {"loadgen bad args", loadgen_bad_args},
        {NULL, NULL},
    };
    return pl_run("plugins_traffic", cases);
}
