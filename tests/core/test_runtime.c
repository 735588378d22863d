/* test_runtime.c - creating and destroying runtimes (core/runtime/runtime.c):
 * options, thread counts, destroy while actors are busy, several runtimes in
 * one process; a log line is one line whatever its text (runtime/log.c).
 *
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "support.h"

#define WAIT_S 20.0

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)

static shoal_runtime_opts_t quiet_opts(void)
{
    shoal_runtime_opts_t o;
    shoal_runtime_opts_init(&o);
    o.debug_checks = 1;
    o.log_level = SHOAL_LOG_ERROR;
    return o;
}

/* ---- create and destroy ------------------------------------------------------------- */

static void create_destroy_with_defaults(void)
{
    int base = shoal_test_thread_base();
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned expect = cpus < 2 ? 2 : (unsigned)cpus;

    shoal_runtime_opts_t o;
    memset(&o, 0x5a, sizeof o);
    shoal_runtime_opts_init(&o);
    CU_ASSERT_EQUAL(o.threads, 0);
    CU_ASSERT_EQUAL(o.throughput, 0);
    CU_ASSERT_EQUAL(o.debug_checks, 0);
    CU_ASSERT_EQUAL(o.log_level, SHOAL_LOG_INFO);
    CU_ASSERT_PTR_NULL(o.log_fn);

    shoal_runtime_t *rt = (shoal_runtime_t *)&o; /* overwritten: NULL on failure, rt on success */
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_create(&rt, NULL), SHOAL_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    CU_ASSERT_EQUAL(shoal_runtime_threads(rt), expect);
    CU_ASSERT_EQUAL(shoal_test_threads(base + (int)expect + 1),
                    base + (int)expect + 1); /* + timer */
    shoal_runtime_stats_t s = shoal_test_stats(rt);
    shoal_runtime_stats_t zero;
    memset(&zero, 0, sizeof zero);
    s.parks = s.wakes = 0; /* idle workers may already have parked */
    CU_ASSERT_EQUAL(memcmp(&s, &zero, sizeof s), 0);
    shoal_runtime_destroy(rt);
    CU_ASSERT_EQUAL(shoal_test_threads(base), base);

    /* The same with explicit default options, several times. */
    for (int i = 0; i < 20; i++) {
        shoal_runtime_opts_init(&o);
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_create(&rt, &o), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal_runtime_threads(rt), expect);
        shoal_runtime_destroy(rt);
    }
    CU_ASSERT_EQUAL(shoal_test_threads(base), base);
    shoal_runtime_destroy(NULL); /* a no-op */
}

static void create_with_explicit_options(void)
{
    int base = shoal_test_thread_base();
    for (unsigned t = 1; t <= 5; t++) {
        shoal_runtime_opts_t o = quiet_opts();
        o.threads = t;
        o.throughput = 8;
        o.spin_us = 10;
        o.max_actors = 1024;
        shoal_runtime_t *rt = NULL;
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_create(&rt, &o), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal_runtime_threads(rt), t);
        CU_ASSERT_EQUAL(shoal_test_threads(base + (int)t + 1), base + (int)t + 1);
        shoal_runtime_destroy(rt);
        CU_ASSERT_EQUAL(shoal_test_threads(base), base);
    }
}

static void invalid_options_are_einval(void)
{
    shoal_runtime_opts_t bad[6];
    for (int i = 0; i < 6; i++)
        bad[i] = quiet_opts();
    bad[0].threads = 1025;
    bad[1].throughput = (1u << 20) + 1;
    bad[2].spin_us = 1000001;
    bad[3].max_actors = 15;
    bad[4].max_actors = (1u << 30) + 1;
    bad[5].max_actors = 1;
    int base = shoal_test_thread_base();
    for (int i = 0; i < 6; i++) {
        shoal_runtime_t *rt = (shoal_runtime_t *)&bad[i];
        CU_ASSERT_EQUAL(shoal_runtime_create(&rt, &bad[i]), SHOAL_EINVAL);
        CU_ASSERT_PTR_NULL(rt);
    }
    CU_ASSERT_EQUAL(shoal_runtime_create(NULL, NULL), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_test_threads(base), base);
    /* The limits themselves are fine. */
    shoal_runtime_opts_t ok = quiet_opts();
    ok.threads = 2;
    ok.throughput = 1u << 20;
    ok.spin_us = 1000000;
    ok.max_actors = 16;
    shoal_runtime_t *rt = NULL;
    CU_ASSERT_EQUAL(shoal_runtime_create(&rt, &ok), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

/* ---- throughput: the size of a turn -------------------------------------------------- */

static atomic_int tp_entered, tp_release, tp_handled;
static int tp_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    if (msg->type == 1) {
        atomic_store(&tp_entered, 1);
        shoal_test_wait_flag(&tp_release, WAIT_S);
    }
    atomic_fetch_add(&tp_handled, 1);
    return 0;
}

static void throughput_sets_the_turn_size(void)
{
    static const shoal_behaviour_t beh = {.name = "tp", .handle_message = tp_handle};
    const unsigned tps[3] = {8, 1, 32};
    for (int k = 0; k < 3; k++) {
        shoal_runtime_opts_t o = quiet_opts();
        o.threads = 2;
        o.throughput = tps[k];
        shoal_runtime_t *rt = NULL;
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_create(&rt, &o), SHOAL_OK);
        atomic_store(&tp_entered, 0);
        atomic_store(&tp_release, 0);
        atomic_store(&tp_handled, 0);
        shoal_pid_t pid;
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &beh, NULL, NULL, &pid), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, 1, NULL, 0), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal_test_wait_flag(&tp_entered, WAIT_S), 1);
        enum { Q = 80 };
        for (int i = 0; i < Q; i++)
            CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, 2, NULL, 0), SHOAL_OK);
        atomic_store(&tp_release, 1);
        WAIT_UNTIL(atomic_load(&tp_handled) == Q + 1 && shoal_test_stats(rt).msgs_handled == Q + 1);
        /* Every turn pops a full budget (all were queued before the first
         * turn went on), so Q + 1 messages take exactly ceil((Q+1)/tp). */
        CU_ASSERT_EQUAL(shoal_test_stats(rt).turns, (Q + 1 + tps[k] - 1) / tps[k]);
        shoal_runtime_destroy(rt);
    }
}

/* ---- max_actors ------------------------------------------------------------------------ */

static int nop_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    return 0;
}
static const shoal_behaviour_t nop_beh = {.name = "nop", .handle_message = nop_handle};

static void max_actors_is_enforced(void)
{
    shoal_runtime_opts_t o = quiet_opts();
    o.threads = 2;
    o.max_actors = 16;
    shoal_runtime_t *rt = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_create(&rt, &o), SHOAL_OK);
    shoal_pid_t pid;
    for (int i = 0; i < 16; i++)
        CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &nop_beh, NULL, NULL, &pid), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &nop_beh, NULL, NULL, &pid), SHOAL_ELIMIT);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_live, 16);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_spawned, 16);
    /* A freed slot can be used again (by the thread that freed it or
     * another, after its actor ended). */
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, pid), SHOAL_OK);
    WAIT_UNTIL(shoal_test_stats(rt).actors_live == 15);
    shoal_runtime_destroy(rt);
}

/* ---- destroy while busy ----------------------------------------------------------------- */

enum { B_SELF = 1, B_WORK = 2, B_TICK = 3, B_CALL = 4 };

static atomic_int busy_terms, busy_bad_reason, busy_inits;
static atomic_int busy_frees, busy_allocs;
static shoal_pid_t busy_callee; /* set before any B_CALL is sent */

static const shoal_behaviour_t busy_beh; /* defined below; children use it */

static void busy_free(void *p)
{
    atomic_fetch_add(&busy_frees, 1);
    free(p);
}

static int busy_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    int kids = args ? *(const int *)args : 0;
    atomic_fetch_add(&busy_inits, 1);
    for (int i = 0; i < kids; i++) {
        shoal_pid_t c;
        int rc = shoal_spawn(ctx, &busy_beh, NULL, NULL, &c);
        if (rc != SHOAL_OK)
            return rc;
        if (shoal_send(ctx, c, B_SELF, NULL, 0) != SHOAL_OK)
            return SHOAL_EFAILED;
    }
    return 0;
}

static int busy_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    switch (msg->type) {
    case B_SELF: { /* keep busy: a heap payload to self, forever */
        void *p = malloc(100);
        atomic_fetch_add(&busy_allocs, 1);
        if (shoal_send_owned(ctx, shoal_self(ctx), B_SELF, p, 100, busy_free) != SHOAL_OK)
            busy_free(p);
        for (volatile int i = 0; i < 2000; i++) {
        }
        return 0;
    }
    case B_WORK:
        for (volatile int i = 0; i < 20000; i++) {
        }
        return 0;
    case B_TICK: { /* a far timer with a heap payload: pending at destroy */
        static const unsigned char big[3000];
        return shoal_send_after(ctx, shoal_self(ctx), 60000, B_WORK, big, sizeof big, NULL);
    }
    case B_CALL: {
        shoal_ref_t ref;
        /* A call that stays pending (the callee defers), with a timeout. */
        return shoal_call(ctx, busy_callee, 1, NULL, 0, 60000, &ref);
    }
    default:
        return 0;
    }
}

static int busy_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx;
    (void)state;
    (void)msg;
    (void)reply;
    return SHOAL_DEFER;
}

static void busy_term(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx;
    (void)state;
    if (reason != SHOAL_ESHUTDOWN)
        atomic_fetch_add(&busy_bad_reason, 1);
    atomic_fetch_add(&busy_terms, 1);
}

static const shoal_behaviour_t busy_beh = {.name = "busy",
                                           .init = busy_init,
                                           .handle_message = busy_handle,
                                           .handle_call = busy_call,
                                           .terminate = busy_term};

static void destroy_while_busy_stops_everyone(void)
{
    enum { SELF = 6, QUEUED = 6, Q_MSGS = 2000, PARENTS = 2, KIDS = 3 };
    atomic_store(&busy_terms, 0);
    atomic_store(&busy_bad_reason, 0);
    atomic_store(&busy_inits, 0);
    atomic_store(&busy_frees, 0);
    atomic_store(&busy_allocs, 0);
    int base = shoal_test_thread_base();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &busy_beh, NULL, NULL, &busy_callee), SHOAL_OK);
    int total = 1;
    shoal_pid_t pid;
    for (int i = 0; i < SELF; i++, total++) {
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &busy_beh, NULL, NULL, &pid), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, B_SELF, NULL, 0), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, B_TICK, NULL, 0), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, B_CALL, NULL, 0), SHOAL_OK);
    }
    for (int i = 0; i < QUEUED; i++, total++) {
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &busy_beh, NULL, NULL, &pid), SHOAL_OK);
        for (int k = 0; k < Q_MSGS; k++) {
            if (k % 100 == 0) {
                void *p = malloc(64);
                atomic_fetch_add(&busy_allocs, 1);
                if (shoal_runtime_send_owned(rt, pid, B_WORK, p, 64, busy_free) != SHOAL_OK) {
                    busy_free(p);
                    CU_FAIL("send_owned");
                }
            } else {
                CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, B_WORK, NULL, 0), SHOAL_OK);
            }
        }
    }
    static const int kids = KIDS;
    for (int i = 0; i < PARENTS; i++, total += 1 + KIDS)
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &busy_beh, &kids, NULL, &pid), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&busy_inits) == total);
    CU_ASSERT_EQUAL(atomic_load(&busy_inits), total);
    /* Let traffic run a little, then destroy mid-flight. */
    WAIT_UNTIL(shoal_test_stats(rt).msgs_handled > 5000);
    shoal_runtime_stats_t s = shoal_test_stats(rt);
    CU_ASSERT(s.msgs_sent > s.msgs_handled); /* work is still queued */
    shoal_runtime_destroy(rt);
    CU_ASSERT_EQUAL(atomic_load(&busy_terms), total);
    CU_ASSERT_EQUAL(atomic_load(&busy_bad_reason), 0);
    /* Every handed-over payload was freed exactly once: handled or dropped. */
    CU_ASSERT_EQUAL(atomic_load(&busy_frees), atomic_load(&busy_allocs));
    CU_ASSERT_EQUAL(shoal_test_threads(base), base);
}

/* ---- two runtimes at once ---------------------------------------------------------------- */

/* An actor in one runtime and one in another play ping-pong, each sending
 * with shoal_runtime_send into the other runtime from its handler. */
typedef struct {
    shoal_runtime_t *peer_rt;
    shoal_pid_t peer;
    atomic_int *count;
} xr_side_t;

static xr_side_t xr_side[2];
static atomic_int xr_count[2], xr_err, xr_done;
static int xr_rounds;

static int xr_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    *(int *)state = *(const int *)args;
    return 0;
}

static int xr_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    int me = *(int *)state;
    int n;
    memcpy(&n, msg->data, sizeof n);
    if (msg->from != SHOAL_PID_NONE) /* from another runtime: not an actor of ours */
        atomic_fetch_add(&xr_err, 1);
    atomic_fetch_add(&xr_count[me], 1);
    if (n >= xr_rounds) {
        atomic_store(&xr_done, 1);
        return 0;
    }
    n++;
    if (shoal_runtime_send(xr_side[me].peer_rt, xr_side[me].peer, 1, &n, sizeof n) != SHOAL_OK)
        atomic_fetch_add(&xr_err, 1);
    return 0;
}

static const shoal_behaviour_t xr_beh = {
    .name = "cross", .state_size = sizeof(int), .init = xr_init, .handle_message = xr_handle};

/* Stats of both runtimes when the game ended, before its actors stop. */
static shoal_runtime_stats_t xr_sa, xr_sb;

static void cross_play(shoal_runtime_t *a, shoal_runtime_t *b, int rounds)
{
    static const int ids[2] = {0, 1};
    xr_rounds = rounds;
    atomic_store(&xr_count[0], 0);
    atomic_store(&xr_count[1], 0);
    atomic_store(&xr_err, 0);
    atomic_store(&xr_done, 0);
    shoal_pid_t pa, pb;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(a, &xr_beh, &ids[0], NULL, &pa), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(b, &xr_beh, &ids[1], NULL, &pb), SHOAL_OK);
    xr_side[0] = (xr_side_t){b, pb, &xr_count[0]};
    xr_side[1] = (xr_side_t){a, pa, &xr_count[1]};
    int n = 0;
    CU_ASSERT_EQUAL(shoal_runtime_send(a, pa, 1, &n, sizeof n), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&xr_done));
    CU_ASSERT_EQUAL(atomic_load(&xr_done), 1);
    CU_ASSERT_EQUAL(atomic_load(&xr_err), 0);
    CU_ASSERT_EQUAL(atomic_load(&xr_count[0]) + atomic_load(&xr_count[1]), rounds + 1);
    /* The last handler may still be returning: wait for its count. */
    WAIT_UNTIL(shoal_test_stats(a).msgs_handled + (a == b ? 0 : shoal_test_stats(b).msgs_handled) >=
               (uint64_t)rounds + 3);
    xr_sa = shoal_test_stats(a);
    xr_sb = shoal_test_stats(b);
    /* Stop both sides so the next round starts clean. */
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(a, pa), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(b, pb), SHOAL_OK);
    WAIT_UNTIL(shoal_test_stats(a).actors_live == 0 && shoal_test_stats(b).actors_live == 0);
}

static void two_runtimes_at_once(void)
{
    int base = shoal_test_thread_base();
    shoal_runtime_t *a = shoal_test_runtime(2), *b = shoal_test_runtime(3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(shoal_test_threads(base + 2 + 1 + 3 + 1), base + 2 + 1 + 3 + 1);
    cross_play(a, b, 10000);
    shoal_runtime_stats_t sa = xr_sa, sb = xr_sb;
    CU_ASSERT_EQUAL(sa.actors_spawned, 1);
    CU_ASSERT_EQUAL(sb.actors_spawned, 1);
    /* 10001 messages plus one init on each side */
    CU_ASSERT_EQUAL(sa.msgs_handled + sb.msgs_handled, 10001 + 2);
    CU_ASSERT_EQUAL(sa.msgs_handled, 5001 + 1);
    CU_ASSERT_EQUAL(sb.msgs_handled, 5000 + 1);
    /* b's workers sent into a and a's into b: each runtime counted the
     * sends into it, wherever they came from. */
    CU_ASSERT_EQUAL(sa.msgs_sent + sb.msgs_sent, 10001);

    /* Destroy b while a's workers still hold caches for it, then make a
     * third runtime (its key may reuse b's) and play again from a's
     * workers. */
    shoal_runtime_destroy(b);
    CU_ASSERT_EQUAL(shoal_test_threads(base + 2 + 1), base + 2 + 1);
    shoal_runtime_t *c = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    cross_play(a, c, 10000);
    CU_ASSERT_EQUAL(xr_sb.msgs_handled, 5000 + 1);
    shoal_runtime_destroy(a); /* now the other order */
    cross_play(c, c, 100);    /* c alone is unaffected */
    shoal_runtime_destroy(c);
    CU_ASSERT_EQUAL(shoal_test_threads(base), base);
}

/* ---- a thread's cache (runtime/tcache.c) ----------------------------------------------- */

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t to;
    int rc[3];
} sender_t;

static void *send_three(void *arg)
{
    sender_t *s = arg;
    for (int i = 0; i < 3; i++)
        s->rc[i] = shoal_runtime_send(s->rt, s->to, 1, NULL, 0);
    return NULL;
}

/* A thread outside the dispatcher keeps the cache it last used: sends
 * from it count into the runtime they go to, never into a cache of one
 * destroyed before (a new runtime may take its address), and a thread
 * that exits hands its counts on. */
static void a_threads_cache_follows_its_runtime(void)
{
    for (int round = 0; round < 4; round++) {
        shoal_runtime_t *rt = shoal_test_runtime(2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
        shoal_pid_t pid;
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &nop_beh, NULL, NULL, &pid), SHOAL_OK);
        for (int i = 0; i < 5; i++)
            CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, 1, NULL, 0), SHOAL_OK);
        sender_t s = {rt, pid, {-1, -1, -1}};
        pthread_t t;
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, send_three, &s), 0);
        pthread_join(t, NULL);
        for (int i = 0; i < 3; i++)
            CU_ASSERT_EQUAL(s.rc[i], SHOAL_OK);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, 1, NULL, 0), SHOAL_OK);
        WAIT_UNTIL(shoal_test_stats(rt).msgs_handled >= 9);
        shoal_runtime_stats_t st = shoal_test_stats(rt);
        CU_ASSERT_EQUAL(st.msgs_sent, 9);
        CU_ASSERT_EQUAL(st.msgs_handled, 9);
        shoal_runtime_destroy(rt);
    }
}

/* ---- one log line ------------------------------------------------------------------------ */

static _Atomic int said;
static char said_line[1024];

static void capture(void *user, int level, const char *line)
{
    (void)user;
    if (level == SHOAL_LOG_WARN && strstr(line, "text: ") != NULL && !atomic_load(&said)) {
        snprintf(said_line, sizeof said_line, "%s", line);
        atomic_store(&said, 1); /* seq_cst: the test thread reads said_line after */
    }
}

static int say_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    shoal_log(ctx, SHOAL_LOG_WARN, "text: %s", (const char *)args);
    return SHOAL_OK;
}

/* A newline, a carriage return, a tab, an escape sequence, a DEL and a C1
 * control (U+009B, a one-character ESC [) in a logged text (a payload a
 * plugin quotes): log_fn gets the text as it was (its format escapes), and
 * written as text each comes out escaped, on one line; other UTF-8 as it
 * is. */
static void a_log_line_is_one_line(void)
{
    static const char text[] = "ok\n2026-11-24T00:00:00.000Z gen=1 error forged"
                               "\r\t\x1b[31mred\x7f \xc2\x9b"
                               "2J caf\xc3\xa9";
    static const shoal_behaviour_t beh = {
        .name = "say", .init = say_init, .handle_message = nop_handle};
    shoal_runtime_opts_t o = quiet_opts();
    o.log_level = SHOAL_LOG_WARN;
    o.log_fn = capture;
    shoal_runtime_t *rt = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_create(&rt, &o), SHOAL_OK);
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &beh, text, NULL, &pid), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&said));
    CU_ASSERT_STRING_EQUAL(strstr(said_line, "text: ") + 6, text);
    shoal_runtime_destroy(rt);

    char buf[200];
    CU_ASSERT_STRING_EQUAL(shoal__log_clean(text, buf, sizeof buf),
                           "ok\\n2026-11-24T00:00:00.000Z gen=1 error forged"
                           "\\r\\t\\x1b[31mred\\x7f \\u009b2J caf\xc3\xa9");
    CU_ASSERT_STRING_EQUAL(shoal__log_clean("a\nbcdef", buf, 8), "a\\nbcde");
    CU_ASSERT_STRING_EQUAL(shoal__log_clean("abc\x01", buf, 8), "abc\\x01");
    CU_ASSERT_STRING_EQUAL(shoal__log_clean("abc\x01", buf, 7), "abc"); /* never mid-escape */
    CU_ASSERT_STRING_EQUAL(shoal__log_clean("\xc2\x80\xc2\x9f\xc2\xa0", buf, sizeof buf),
                           "\\u0080\\u009f\xc2\xa0"); /* C1 only; U+00A0 is no control */
    CU_ASSERT_STRING_EQUAL(shoal__log_clean("x\xc2", buf, sizeof buf), "x\xc2");
    const char *clean = "no control characters";
    CU_ASSERT_PTR_EQUAL(shoal__log_clean(clean, buf, sizeof buf), clean);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"create and destroy with defaults", create_destroy_with_defaults},
        {"create with explicit options", create_with_explicit_options},
        {"invalid options are EINVAL", invalid_options_are_einval},
        {"throughput sets the turn size", throughput_sets_the_turn_size},
        {"max_actors is enforced", max_actors_is_enforced},
        {"destroy while busy stops everyone", destroy_while_busy_stops_everyone},
        {"two runtimes at once", two_runtimes_at_once},
        {"a thread's cache follows its runtime", a_threads_cache_follows_its_runtime},
        {"a log line is one line", a_log_line_is_one_line},
        {NULL, NULL},
    };
    return shoal_test_run("runtime", cases);
}
