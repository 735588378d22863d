/* test_plugins_workers.c - the bundled worker plugins (plugins/<name>/),
 * loaded through the loader as the host loads them, each one's behaviour
 * checked exactly: echo's answers and echoes, burn's xs50 checksum, sleep's
 * accounting, crash's k-th message with each mode - with its stats call and
 * its inspect answer agreeing, and bad args failing init with the exact
 * message and the value's file:line:col. (sink and loadgen are in
 * test_plugins_traffic, the args schemas in test_plugins_descriptors.) */
#include <stdio.h>
#include <string.h>

#include "plugins_kit.h"

/* The plugins' protocol headers (plugins/<name>/<name>.h). */
#include "../../plugins/burn/burn.h"
#include "../../plugins/crash/crash.h"
#include "../../plugins/echo/echo.h"
#include "../../plugins/sleep/sleep.h"

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

/* ---- cases ------------------------------------------------------------------------------------
 */

static void echo_answers_and_echoes(void)
{
    shoal_runtime_t *rt = pl_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t echo = pl_spawn(rt, "echo", "{}", 64);

    /* A call: the same type and payload back. */
    char buf[64];
    uint32_t type = 0;
    int status = 0;
    CU_ASSERT_EQUAL(pl_call(rt, echo, 7, "hello", 5, buf, sizeof buf, &type, &status), 5);
    CU_ASSERT_EQUAL(status, SHOAL_OK);
    CU_ASSERT_EQUAL(type, 7);
    CU_ASSERT_EQUAL(memcmp(buf, "hello", 5), 0);
    CU_ASSERT_EQUAL(pl_call(rt, echo, 8, NULL, 0, buf, sizeof buf, &type, &status), 0);
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
    pl_stats(rt, echo, &st, sizeof st);
    CU_ASSERT_EQUAL(st.calls, 2);
    CU_ASSERT_EQUAL(st.messages, 2);
    CU_ASSERT_EQUAL(st.echoed, 1);
    CU_ASSERT_EQUAL(st.echo_refused, 0);
    pl_inspect_is(rt, echo, "echo", "64",
                  "{\"calls\":2,\"messages\":2,\"echoed\":1,\"echo_refused\":0}");

    /* `reply`: calls are answered with it. */
    shoal_pid_t pong = pl_spawn(rt, "echo", "reply: pong\n", SHOAL_MAILBOX_UNBOUNDED);
    CU_ASSERT_EQUAL(pl_call(rt, pong, 3, "ping", 4, buf, sizeof buf, &type, &status), 4);
    CU_ASSERT_EQUAL(type, 3);
    CU_ASSERT_EQUAL(memcmp(buf, "pong", 4), 0);
    pl_inspect_is(rt, pong, "echo", "null",
                  "{\"calls\":1,\"messages\":0,\"echoed\":0,\"echo_refused\":0}");

    pl_bad_args(rt, "echo", "reply: [a]\n", SHOAL_EINVAL,
                "pool.yaml:1:8: args 'reply': expected a string, got a list");
    pl_done(rt);
}

static void burn_checksum(void)
{
    /* The reference first: the spec's number for N = 1000000. */
    CU_ASSERT_EQUAL(pl_xs50_checksum(1000000), 3111071181u);

    shoal_runtime_t *rt = pl_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t burn = pl_spawn(rt, "burn", "rounds: 50\n", SHOAL_MAILBOX_UNBOUNDED);
    const uint64_t n = 100000;
    int bad = 0;
    for (uint64_t v = 0; v < n; v++)
        bad += shoal_runtime_send(rt, burn, 1, &v, sizeof v) != SHOAL_OK;
    CU_ASSERT_EQUAL(bad, 0);
    burn_stats_t st;
    pl_stats(rt, burn, &st, sizeof st); /* after the casts: same sender thread, same queue */
    CU_ASSERT_EQUAL(st.count, n);
    CU_ASSERT_EQUAL(st.acc, pl_xs50_checksum(n));
    CU_ASSERT_EQUAL(st.rounds, 50);

    /* A call: the 4-byte result under the request's type, and counted. */
    uint64_t v = SHOAL_TEST_NO_EXIT;
    uint32_t r = 0, type = 0;
    int status = 0;
    CU_ASSERT_EQUAL(pl_call(rt, burn, 77, &v, sizeof v, &r, sizeof r, &type, &status), 4);
    CU_ASSERT_EQUAL(type, 77);
    CU_ASSERT_EQUAL(r, pl_xs(SHOAL_TEST_NO_EXIT, 50));
    char info[128];
    snprintf(info, sizeof info, "{\"count\":%llu,\"acc\":%u,\"rounds\":50}",
             (unsigned long long)n + 1,
             (unsigned)(pl_xs50_checksum(n) ^ pl_xs(SHOAL_TEST_NO_EXIT, 50)));
    pl_inspect_is(rt, burn, "burn", "null", info);

    /* A short payload: v is the count so far. rounds: 0 leaves v + 1. */
    shoal_pid_t zero = pl_spawn(rt, "burn", "rounds: 0\n", 8);
    CU_ASSERT_EQUAL(pl_call(rt, zero, 1, NULL, 0, &r, sizeof r, NULL, &status), 4);
    CU_ASSERT_EQUAL(r, 1);
    CU_ASSERT_EQUAL(pl_call(rt, zero, 1, "ab", 2, &r, sizeof r, NULL, &status), 4);
    CU_ASSERT_EQUAL(r, 2);

    /* spin keeps microseconds: each call takes at least 2000us. */
    shoal_pid_t spin = pl_spawn(rt, "burn", "spin: 2000us\n", 8);
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(pl_call(rt, spin, 1, NULL, 0, &r, sizeof r, NULL, &status), 4);
    CU_ASSERT(shoal_test_now() - t0 >= 0.002);
    shoal_pid_t hour = pl_spawn(rt, "burn", "spin: 1h\n", 8); /* the most it takes */
    pl_inspect_is(rt, hour, "burn", "8", "{\"count\":0,\"acc\":0,\"rounds\":50}");

    pl_bad_args(rt, "burn", "spin: 2h\n", SHOAL_EINVAL,
                "pool.yaml:1:7: args 'spin': 2h is out of range: expected 0 to 1h");
    pl_bad_args(rt, "burn", "rounds: 5\nspin: 3600000001us\n", SHOAL_EINVAL,
                "pool.yaml:2:7: args 'spin': 3600000001us is out of range: expected 0 to 1h");
    pl_bad_args(rt, "burn", "spin: 50\n", SHOAL_EINVAL,
                "pool.yaml:1:7: args 'spin': '50' has no unit: expected a duration like 50us, "
                "250ms, 2s or 1m");
    pl_bad_args(rt, "burn", "rounds: -1\n", SHOAL_EINVAL,
                "pool.yaml:1:9: args 'rounds': -1 is out of range: expected 0 to 1000000000");
    pl_done(rt);
}

static void sleep_accounts_its_naps(void)
{
    shoal_runtime_t *rt = pl_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t s = pl_spawn(rt, "sleep", "latency: 200us\n", 16);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, 5, &i, sizeof i), SHOAL_OK);
    char buf[16];
    uint32_t type = 0;
    int status = 0;
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(pl_call(rt, s, 6, "zz", 2, buf, sizeof buf, &type, &status), 2);
    CU_ASSERT(shoal_test_now() - t0 >= 4 * 0.0002); /* three messages, then the call */
    CU_ASSERT_EQUAL(type, 6);
    CU_ASSERT_EQUAL(memcmp(buf, "zz", 2), 0);
    sleep_stats_t st;
    pl_stats(rt, s, &st, sizeof st);
    CU_ASSERT_EQUAL(st.messages, 3);
    CU_ASSERT_EQUAL(st.calls, 1);
    CU_ASSERT_EQUAL(st.slept_us, 800);
    pl_inspect_is(rt, s, "sleep", "16", "{\"messages\":3,\"calls\":1,\"slept_us\":800}");

    /* The default latency is 1ms; jitter adds 0 .. jitter. */
    shoal_pid_t d = pl_spawn(rt, "sleep", NULL, 16);
    CU_ASSERT_EQUAL(pl_call(rt, d, 6, NULL, 0, NULL, 0, NULL, &status), 0);
    pl_stats(rt, d, &st, sizeof st);
    CU_ASSERT_EQUAL(st.slept_us, 1000);
    shoal_pid_t j = pl_spawn(rt, "sleep", "latency: 0\njitter: 300us\n", 16);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(pl_call(rt, j, 6, NULL, 0, NULL, 0, NULL, &status), 0);
    pl_stats(rt, j, &st, sizeof st);
    CU_ASSERT_EQUAL(st.calls, 4);
    CU_ASSERT(st.slept_us <= 4 * 300);

    pl_bad_args(rt, "sleep", "latency: 50\n", SHOAL_EINVAL,
                "pool.yaml:1:10: args 'latency': '50' has no unit: expected a duration like 50us, "
                "250ms, 2s or 1m");
    pl_bad_args(rt, "sleep", "latency: 1ms\njitter: 61m\n", SHOAL_EINVAL,
                "pool.yaml:2:9: args 'jitter': 61m is out of range: expected 0 to 1h");
    pl_bad_args(rt, "sleep", "latency: 3600000001us\n", SHOAL_EINVAL,
                "pool.yaml:1:10: args 'latency': 3600000001us is out of range: expected 0 to 1h");
    pl_done(rt);
}

static void crash_on_the_kth(void)
{
    shoal_runtime_t *rt = pl_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);

    /* panic, every 3: two messages live, the third ends it. */
    shoal_pid_t c = pl_spawn(rt, "crash", "every: 3\nmode: panic\n", 64);
    for (int i = 0; i < 2; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, c, 5, NULL, 0), SHOAL_OK);
    crash_stats_t st;
    pl_stats(rt, c, &st, sizeof st); /* neither counted nor fatal */
    CU_ASSERT_EQUAL(st.messages, 2);
    CU_ASSERT_EQUAL(st.calls, 0);
    CU_ASSERT_EQUAL(st.every, 3);
    CU_ASSERT_EQUAL(st.until_crash, 1);
    pl_inspect_is(rt, c, "crash", "64",
                  "{\"messages\":2,\"calls\":0,\"every\":3,\"until_crash\":1}");
    pl_inspect_is(rt, c, "crash", "64", /* nor is inspect */
                  "{\"messages\":2,\"calls\":0,\"every\":3,\"until_crash\":1}");
    CU_ASSERT_EQUAL(shoal_test_exit_of(c), SHOAL_TEST_NO_EXIT);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, c, 5, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_wait_exit(c, 10.0), SHOAL_EPANIC);
    shoal_test_assert_logged("> crash: panic: crash: message 3 (every 3)\n");

    /* fail, every 2, with calls: the first answered, the second fails. */
    c = pl_spawn(rt, "crash", "every: 2\nmode: fail\n", 64);
    uint32_t type = 0;
    int status = 0;
    CU_ASSERT_EQUAL(pl_call(rt, c, 11, "x", 1, NULL, 0, &type, &status), 0);
    CU_ASSERT_EQUAL(status, SHOAL_OK);
    CU_ASSERT_EQUAL(type, 11);
    CU_ASSERT_EQUAL(pl_call(rt, c, 11, NULL, 0, NULL, 0, NULL, &status), -1);
    CU_ASSERT_EQUAL(status, SHOAL_EFAILED);
    CU_ASSERT_EQUAL(shoal_test_wait_exit(c, 10.0), SHOAL_EFAILED);

    /* exit, every 1 (quoted mode): the first message ends it. */
    c = pl_spawn(rt, "crash", "every: 1\nmode: \"exit\"\n", 64);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, c, 5, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_wait_exit(c, 10.0), SHOAL_EFAILED);

    /* The default: every 10, panic. */
    c = pl_spawn(rt, "crash", NULL, 64);
    pl_inspect_is(rt, c, "crash", "64",
                  "{\"messages\":0,\"calls\":0,\"every\":10,\"until_crash\":10}");

    pl_bad_args(rt, "crash", "every: 3\nmode: boom\n", SHOAL_EINVAL,
                "pool.yaml:2:7: args 'mode': expected one of panic, fail, exit, got 'boom'");
    pl_bad_args(
        rt, "crash", "every: 0\n", SHOAL_EINVAL,
        "pool.yaml:1:8: args 'every': 0 is out of range: expected 1 to 9223372036854775807");
    pl_done(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"echo answers and echoes", echo_answers_and_echoes},
        {"burn: the xs50 checksum", burn_checksum},
        {"sleep accounts its naps", sleep_accounts_its_naps},
        {"crash on the k-th, each mode", crash_on_the_kth},
        {NULL, NULL},
    };
    return pl_run("plugins_workers", cases);
}
