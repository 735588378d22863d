/* test_timer.c - send_after, send_after_priority and cancel through the
 * timer thread (actor/timer.c). shoal_send_after and shoal_cancel_timer need
 * a ctx, so a "driver" actor runs them when the test thread tells it to, and
 * records the timer messages it receives (they are sent to itself). A
 * "gated" target holds its mailbox full for the priority timer's case. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support.h"

/* Slack for "roughly the delay": generous, sanitizer builds are slow. */
#define SLACK_S 2.0

enum { OP_START = 1, OP_CANCEL = 2 };

#define MAX_TIMERS 8
#define MAX_ARRIVALS 64

typedef struct cmd_s {
    uint32_t op;
    uint32_t n;
    uint64_t delay_ms[MAX_TIMERS];
    uint32_t type[MAX_TIMERS];
    shoal_pid_t to;        /* SHOAL_PID_NONE: the driver itself */
    uint32_t slot;         /* OP_CANCEL: which started timer; OP_START: first slot to fill */
    uint32_t payload_size; /* OP_START: send this many pattern bytes (0: none) */
    uint32_t priority;     /* OP_START: bit i set: timer i with shoal_send_after_priority */
} cmd_t;

#define PAYLOAD_MAX 256
static unsigned char pattern(size_t i) { return (unsigned char)(i * 7 + 3); }

#define CMD_TYPE 1
#define FIRST_TIMER_TYPE 100

/* What the driver records; reset before each test. */
static _Atomic unsigned cmds_done;
static _Atomic int start_rc[MAX_TIMERS];
static _Atomic uint64_t timer_ids[MAX_TIMERS];
static _Atomic double started_at[MAX_TIMERS]; /* when send_after was called */
static _Atomic int cancel_rc[4];
static _Atomic unsigned ncancels;
static _Atomic unsigned narrivals;
static _Atomic uint32_t arrival_type[MAX_ARRIVALS];
static _Atomic double arrival_time[MAX_ARRIVALS];
static _Atomic size_t arrival_size[MAX_ARRIVALS];
static _Atomic int arrival_payload_ok[MAX_ARRIVALS];
static _Atomic uint32_t arrival_flags[MAX_ARRIVALS];
static _Atomic shoal_pid_t arrival_from[MAX_ARRIVALS];

static void reset(void)
{
    atomic_store(&cmds_done, 0);
    atomic_store(&ncancels, 0);
    atomic_store(&narrivals, 0);
    for (int i = 0; i < MAX_TIMERS; i++) {
        atomic_store(&start_rc[i], 1);
        atomic_store(&timer_ids[i], 0);
        atomic_store(&started_at[i], 0);
    }
    for (int i = 0; i < 4; i++)
        atomic_store(&cancel_rc[i], 1);
}

/* One actor records arrivals, one at a time: fill the slot, then publish
 * the count, so the test thread never reads a slot early. */
static void record_arrival(const shoal_msg_t *msg)
{
    unsigned i = atomic_load(&narrivals);
    if (i < MAX_ARRIVALS) {
        atomic_store(&arrival_time[i], shoal_test_now());
        atomic_store(&arrival_type[i], msg->type);
        atomic_store(&arrival_size[i], msg->size);
        atomic_store(&arrival_flags[i], msg->flags);
        atomic_store(&arrival_from[i], msg->from);
        int ok = msg->size == 0 ? msg->data == NULL : msg->data != NULL;
        for (size_t k = 0; ok && k < msg->size; k++)
            ok = ((const unsigned char *)msg->data)[k] == pattern(k);
        atomic_store(&arrival_payload_ok[i], ok);
    }
    atomic_store(&narrivals, i + 1);
}

static int driver_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind != SHOAL_MSG_CAST)
        return 0;
    if (msg->type != CMD_TYPE) {
        record_arrival(msg);
        return 0;
    }
    cmd_t c;
    if (msg->size != sizeof c)
        return SHOAL_EINVAL;
    memcpy(&c, msg->data, sizeof c);
    shoal_pid_t to = c.to != SHOAL_PID_NONE ? c.to : shoal_self(ctx);
    if (c.op == OP_START) {
        unsigned char payload[PAYLOAD_MAX];
        size_t psize = c.payload_size < PAYLOAD_MAX ? c.payload_size : PAYLOAD_MAX;
        for (size_t k = 0; k < psize; k++)
            payload[k] = pattern(k);
        for (uint32_t i = 0; i < c.n && c.slot + i < MAX_TIMERS; i++) {
            shoal_timer_t id = 0;
            atomic_store(&started_at[c.slot + i], shoal_test_now());
            int rc = (c.priority >> i & 1u)
                         ? shoal_send_after_priority(ctx, to, c.delay_ms[i], c.type[i],
                                                     psize ? payload : NULL, psize, &id)
                         : shoal_send_after(ctx, to, c.delay_ms[i], c.type[i],
                                            psize ? payload : NULL, psize, &id);
            atomic_store(&timer_ids[c.slot + i], id);
            atomic_store(&start_rc[c.slot + i], rc);
        }
    } else if (c.op == OP_CANCEL) {
        int rc = shoal_cancel_timer(ctx, (shoal_timer_t)atomic_load(&timer_ids[c.slot]));
        unsigned k = atomic_fetch_add(&ncancels, 1);
        if (k < 4)
            atomic_store(&cancel_rc[k], rc);
    }
    atomic_fetch_add(&cmds_done, 1);
    return 0;
}

static const shoal_behaviour_t driver = {.name = "timer-driver", .handle_message = driver_message};

/* A target that a GATE_TYPE message holds inside its handler until the gate
 * opens, so its mailbox stays as the test filled it; it records the rest. */
#define GATE_TYPE 2
static atomic_int gate_open;
static atomic_int gate_blocked;

static int gated_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    if (msg->kind != SHOAL_MSG_CAST)
        return 0;
    if (msg->type == GATE_TYPE) {
        atomic_store(&gate_blocked, 1);
        while (!atomic_load(&gate_open))
            shoal_test_nap();
        return 0;
    }
    record_arrival(msg);
    return 0;
}

static const shoal_behaviour_t gated = {.name = "timer-gated", .handle_message = gated_message};

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int wait_until(_Atomic unsigned *v, unsigned want, double timeout_s)
{
    double end = shoal_test_now() + timeout_s;
    while (atomic_load(v) < want && shoal_test_now() < end)
        sleep_ms(1);
    return atomic_load(v) >= want;
}

static int command(shoal_runtime_t *rt, shoal_pid_t drv, const cmd_t *c)
{
    unsigned before = atomic_load(&cmds_done);
    int rc = shoal_runtime_send(rt, drv, CMD_TYPE, c, sizeof *c);
    if (rc != SHOAL_OK)
        return rc;
    return wait_until(&cmds_done, before + 1, 10) ? SHOAL_OK : SHOAL_ETIMEDOUT;
}

static int start_one(shoal_runtime_t *rt, shoal_pid_t drv, uint32_t slot, uint64_t delay_ms,
                     uint32_t type)
{
    cmd_t c = {.op = OP_START, .n = 1, .slot = slot};
    c.delay_ms[0] = delay_ms;
    c.type[0] = type;
    return command(rt, drv, &c);
}

static int cancel(shoal_runtime_t *rt, shoal_pid_t drv, uint32_t slot)
{
    cmd_t c = {.op = OP_CANCEL, .slot = slot};
    return command(rt, drv, &c);
}

static shoal_runtime_t *setup(shoal_pid_t *drv)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    if (rt == NULL)
        return NULL;
    if (shoal_runtime_spawn(rt, &driver, NULL, NULL, drv) != SHOAL_OK) {
        shoal_runtime_destroy(rt);
        return NULL;
    }
    return rt;
}

/* ---- cases ------------------------------------------------------------------ */

static void delivers_after_the_delay(void)
{
    shoal_pid_t drv;
    shoal_runtime_t *rt = setup(&drv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    CU_ASSERT_EQUAL_FATAL(start_one(rt, drv, 0, 150, FIRST_TIMER_TYPE), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&start_rc[0]), SHOAL_OK);
    CU_ASSERT_NOT_EQUAL(atomic_load(&timer_ids[0]), 0);
    CU_ASSERT_TRUE_FATAL(wait_until(&narrivals, 1, 10));
    double waited = atomic_load(&arrival_time[0]) - atomic_load(&started_at[0]);
    CU_ASSERT(waited >= 0.150);
    CU_ASSERT(waited < 0.150 + SLACK_S);
    CU_ASSERT_EQUAL(atomic_load(&arrival_type[0]), FIRST_TIMER_TYPE);
    /* exactly once */
    sleep_ms(100);
    CU_ASSERT_EQUAL(atomic_load(&narrivals), 1);
    shoal_runtime_stats_t st;
    shoal_runtime_stats(rt, &st);
    CU_ASSERT_EQUAL(st.timer_refused, 0);
    shoal_runtime_destroy(rt);
}

static void zero_delay_delivers_at_once(void)
{
    shoal_pid_t drv;
    shoal_runtime_t *rt = setup(&drv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    CU_ASSERT_EQUAL_FATAL(start_one(rt, drv, 0, 0, FIRST_TIMER_TYPE), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&start_rc[0]), SHOAL_OK);
    CU_ASSERT_TRUE_FATAL(wait_until(&narrivals, 1, 10));
    CU_ASSERT(atomic_load(&arrival_time[0]) - atomic_load(&started_at[0]) < SLACK_S);
    shoal_runtime_destroy(rt);
}

static void timers_fire_in_deadline_order(void)
{
    shoal_pid_t drv;
    shoal_runtime_t *rt = setup(&drv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    /* Started in one handler, in an order unlike their deadlines. */
    static const uint64_t delays[6] = {400, 100, 300, 50, 500, 200};
    cmd_t c = {.op = OP_START, .n = 6, .slot = 0};
    for (int i = 0; i < 6; i++) {
        c.delay_ms[i] = delays[i];
        c.type[i] = FIRST_TIMER_TYPE + (uint32_t)delays[i];
    }
    CU_ASSERT_EQUAL_FATAL(command(rt, drv, &c), SHOAL_OK);
    for (int i = 0; i < 6; i++)
        CU_ASSERT_EQUAL(atomic_load(&start_rc[i]), SHOAL_OK);
    /* six distinct timer ids */
    for (int i = 0; i < 6; i++)
        for (int j = i + 1; j < 6; j++)
            CU_ASSERT_NOT_EQUAL(atomic_load(&timer_ids[i]), atomic_load(&timer_ids[j]));
    CU_ASSERT_TRUE_FATAL(wait_until(&narrivals, 6, 10));
    static const uint64_t sorted[6] = {50, 100, 200, 300, 400, 500};
    for (int i = 0; i < 6; i++) {
        CU_ASSERT_EQUAL(atomic_load(&arrival_type[i]), FIRST_TIMER_TYPE + sorted[i]);
        /* each no earlier than its own delay after the first start */
        CU_ASSERT(atomic_load(&arrival_time[i]) - atomic_load(&started_at[0]) >=
                  (double)sorted[i] / 1000.0);
    }
    sleep_ms(50);
    CU_ASSERT_EQUAL(atomic_load(&narrivals), 6);
    shoal_runtime_destroy(rt);
}

static void cancelled_timers_leave_the_rest_in_order(void)
{
    shoal_pid_t drv;
    shoal_runtime_t *rt = setup(&drv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    static const uint64_t delays[6] = {700, 400, 600, 350, 800, 500};
    cmd_t c = {.op = OP_START, .n = 6, .slot = 0};
    for (int i = 0; i < 6; i++) {
        c.delay_ms[i] = delays[i];
        c.type[i] = FIRST_TIMER_TYPE + (uint32_t)delays[i];
    }
    CU_ASSERT_EQUAL_FATAL(command(rt, drv, &c), SHOAL_OK);
    /* cancel the earliest (heap top), one in the middle, and the last */
    CU_ASSERT_EQUAL_FATAL(cancel(rt, drv, 3), SHOAL_OK); /* 350 */
    CU_ASSERT_EQUAL_FATAL(cancel(rt, drv, 2), SHOAL_OK); /* 600 */
    CU_ASSERT_EQUAL_FATAL(cancel(rt, drv, 4), SHOAL_OK); /* 800 */
    CU_ASSERT_EQUAL(atomic_load(&cancel_rc[0]), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&cancel_rc[1]), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&cancel_rc[2]), SHOAL_OK);
    CU_ASSERT_TRUE_FATAL(wait_until(&narrivals, 3, 10));
    sleep_ms(500); /* past the cancelled 800 */
    CU_ASSERT_EQUAL(atomic_load(&narrivals), 3);
    CU_ASSERT_EQUAL(atomic_load(&arrival_type[0]), FIRST_TIMER_TYPE + 400);
    CU_ASSERT_EQUAL(atomic_load(&arrival_type[1]), FIRST_TIMER_TYPE + 500);
    CU_ASSERT_EQUAL(atomic_load(&arrival_type[2]), FIRST_TIMER_TYPE + 700);
    shoal_runtime_destroy(rt);
}

static void payloads_travel_with_the_timer(void)
{
    shoal_pid_t drv;
    shoal_runtime_t *rt = setup(&drv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_runtime_stats_t st;
    shoal_runtime_stats(rt, &st);
    uint64_t heap0 = st.heap_payloads;
    /* inline (32 bytes) first, then a heap copy (200 bytes) */
    cmd_t c = {.op = OP_START, .n = 1, .slot = 0, .payload_size = 32};
    c.delay_ms[0] = 30;
    c.type[0] = FIRST_TIMER_TYPE;
    CU_ASSERT_EQUAL_FATAL(command(rt, drv, &c), SHOAL_OK);
    c.slot = 1;
    c.payload_size = 200;
    c.delay_ms[0] = 60;
    c.type[0] = FIRST_TIMER_TYPE + 1;
    CU_ASSERT_EQUAL_FATAL(command(rt, drv, &c), SHOAL_OK);
    CU_ASSERT_TRUE_FATAL(wait_until(&narrivals, 2, 10));
    CU_ASSERT_EQUAL(atomic_load(&arrival_type[0]), FIRST_TIMER_TYPE);
    CU_ASSERT_EQUAL(atomic_load(&arrival_size[0]), 32);
    CU_ASSERT_TRUE(atomic_load(&arrival_payload_ok[0]));
    CU_ASSERT_EQUAL(atomic_load(&arrival_type[1]), FIRST_TIMER_TYPE + 1);
    CU_ASSERT_EQUAL(atomic_load(&arrival_size[1]), 200);
    CU_ASSERT_TRUE(atomic_load(&arrival_payload_ok[1]));
    shoal_runtime_stats(rt, &st);
    /* the two commands (a cmd_t is over 32 bytes) and the 200-byte payload */
    CU_ASSERT_EQUAL(sizeof(cmd_t) > SHOAL_INLINE_MAX, 1);
    CU_ASSERT_EQUAL(st.heap_payloads - heap0, 2 + 1);
    shoal_runtime_destroy(rt);
}

/* Once shoal__deliver has accepted a timer's envelope, the receiver owns
 * it: it may handle it, drop its heap payload (which rewrites meta) and
 * recycle it at once. The timer thread must not read it after that. Many
 * zero-delay timers with heap payloads make that window easy to hit;
 * ThreadSanitizer reports it, and msgs_sent must count each delivery. */
static void timer_thread_does_not_touch_a_delivered_envelope(void)
{
    shoal_pid_t drv;
    shoal_runtime_t *rt = setup(&drv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    unsigned ncmds = 0, ntimers = 0;
    for (unsigned round = 0; round < 8; round++) {
        cmd_t c = {.op = OP_START, .n = MAX_TIMERS, .slot = 0, .payload_size = 100};
        for (int i = 0; i < MAX_TIMERS; i++) {
            c.delay_ms[i] = 0;
            c.type[i] = FIRST_TIMER_TYPE + (uint32_t)i;
        }
        CU_ASSERT_EQUAL_FATAL(command(rt, drv, &c), SHOAL_OK);
        ncmds++;
        ntimers += MAX_TIMERS;
    }
    CU_ASSERT_TRUE_FATAL(wait_until(&narrivals, ntimers, 10));
    unsigned bad = 0;
    for (unsigned i = 0; i < ntimers && i < MAX_ARRIVALS; i++)
        bad += !atomic_load(&arrival_payload_ok[i]) || atomic_load(&arrival_size[i]) != 100;
    CU_ASSERT_EQUAL(bad, 0);
    shoal_runtime_stats_t st;
    double end = shoal_test_now() + 5;
    do {
        sleep_ms(5);
        shoal_runtime_stats(rt, &st);
    } while (st.msgs_sent < ncmds + ntimers && shoal_test_now() < end);
    CU_ASSERT_EQUAL(st.msgs_sent, ncmds + ntimers);
    CU_ASSERT_EQUAL(st.timer_refused, 0);
    shoal_runtime_destroy(rt);
}

static void cancel_before_expiry_stops_the_message(void)
{
    shoal_pid_t drv;
    shoal_runtime_t *rt = setup(&drv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    /* slot 0: cancelled; slot 1: a later witness that must still arrive */
    CU_ASSERT_EQUAL_FATAL(start_one(rt, drv, 0, 800, FIRST_TIMER_TYPE), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(start_one(rt, drv, 1, 1000, FIRST_TIMER_TYPE + 1), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&start_rc[0]), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&start_rc[1]), SHOAL_OK);
    /* well before the 800 ms are up */
    CU_ASSERT_EQUAL_FATAL(cancel(rt, drv, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&cancel_rc[0]), SHOAL_OK);
    /* twice: the timer is gone */
    CU_ASSERT_EQUAL_FATAL(cancel(rt, drv, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&cancel_rc[1]), SHOAL_ENOPROC);
    /* the witness arrives, the cancelled one never does */
    CU_ASSERT_TRUE_FATAL(wait_until(&narrivals, 1, 10));
    sleep_ms(200);
    CU_ASSERT_EQUAL(atomic_load(&narrivals), 1);
    CU_ASSERT_EQUAL(atomic_load(&arrival_type[0]), FIRST_TIMER_TYPE + 1);
    shoal_runtime_destroy(rt);
}

static void cancel_after_it_fired_is_enoproc(void)
{
    shoal_pid_t drv;
    shoal_runtime_t *rt = setup(&drv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    CU_ASSERT_EQUAL_FATAL(start_one(rt, drv, 0, 20, FIRST_TIMER_TYPE), SHOAL_OK);
    CU_ASSERT_TRUE_FATAL(wait_until(&narrivals, 1, 10));
    CU_ASSERT_EQUAL_FATAL(cancel(rt, drv, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&cancel_rc[0]), SHOAL_ENOPROC);
    /* The entry is reused by the next timer: the old id still does not
     * cancel it (generation), and the new one fires. */
    CU_ASSERT_EQUAL_FATAL(start_one(rt, drv, 1, 200, FIRST_TIMER_TYPE + 1), SHOAL_OK);
    CU_ASSERT_EQUAL((uint32_t)atomic_load(&timer_ids[1]), (uint32_t)atomic_load(&timer_ids[0]));
    CU_ASSERT_NOT_EQUAL(atomic_load(&timer_ids[1]), atomic_load(&timer_ids[0]));
    CU_ASSERT_EQUAL_FATAL(cancel(rt, drv, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&cancel_rc[1]), SHOAL_ENOPROC);
    CU_ASSERT_TRUE_FATAL(wait_until(&narrivals, 2, 10));
    CU_ASSERT_EQUAL(atomic_load(&arrival_type[1]), FIRST_TIMER_TYPE + 1);
    shoal_runtime_destroy(rt);
}

static void bogus_timer_ids_are_enoproc(void)
{
    shoal_pid_t drv;
    shoal_runtime_t *rt = setup(&drv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    /* slot 5 was never started: its id is 0 */
    CU_ASSERT_EQUAL_FATAL(cancel(rt, drv, 5), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&cancel_rc[0]), SHOAL_ENOPROC);
    atomic_store(&timer_ids[6], UINT64_C(0x0000000100ffffff)); /* beyond every entry */
    CU_ASSERT_EQUAL_FATAL(cancel(rt, drv, 6), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&cancel_rc[1]), SHOAL_ENOPROC);
    shoal_runtime_destroy(rt);
}

static void delivery_to_a_dead_actor_is_counted(void)
{
    shoal_pid_t drv;
    shoal_runtime_t *rt = setup(&drv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t victim;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &driver, NULL, NULL, &victim), SHOAL_OK);
    cmd_t c = {.op = OP_START, .n = 1, .slot = 0, .to = victim};
    c.delay_ms[0] = 200;
    c.type[0] = FIRST_TIMER_TYPE;
    CU_ASSERT_EQUAL_FATAL(command(rt, drv, &c), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&start_rc[0]), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, victim), SHOAL_OK);
    shoal_runtime_stats_t st;
    double end = shoal_test_now() + 10;
    do {
        sleep_ms(5);
        shoal_runtime_stats(rt, &st);
    } while (st.timer_refused == 0 && shoal_test_now() < end);
    CU_ASSERT_EQUAL(st.timer_refused, 1);
    CU_ASSERT_EQUAL(atomic_load(&narrivals), 0);
    shoal_runtime_destroy(rt);
}

static void destroy_with_pending_timers_frees_them(void)
{
    /* Timers far in the future, with heap payloads, when the runtime goes:
     * destroy must not wait for them, deliver them, or leak (LSan checks). */
    shoal_pid_t drv;
    shoal_runtime_t *rt = setup(&drv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    cmd_t c = {.op = OP_START, .n = 3, .slot = 0, .payload_size = 100};
    for (int i = 0; i < 3; i++) {
        c.delay_ms[i] = 60000;
        c.type[i] = FIRST_TIMER_TYPE + (uint32_t)i;
    }
    CU_ASSERT_EQUAL_FATAL(command(rt, drv, &c), SHOAL_OK);
    double t0 = shoal_test_now();
    shoal_runtime_destroy(rt);
    CU_ASSERT(shoal_test_now() - t0 < 10);
    CU_ASSERT_EQUAL(atomic_load(&narrivals), 0);
}

/* A priority timer goes to the system mailbox: a full user mailbox does
 * not refuse it, where an ordinary timer's delivery is refused and counted. */
static void priority_timer_is_not_refused_by_a_full_mailbox(void)
{
    shoal_pid_t drv;
    shoal_runtime_t *rt = setup(&drv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    atomic_store(&gate_open, 0);
    atomic_store(&gate_blocked, 0);
    shoal_pid_t target;
    shoal_spawn_opts_t opts = {.mailbox_limit = 1};
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &gated, NULL, &opts, &target), SHOAL_OK);
    /* Hold it, then fill its one place. */
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(rt, target, GATE_TYPE, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_test_wait_flag(&gate_blocked, 10), 1);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(rt, target, FIRST_TIMER_TYPE, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, target, FIRST_TIMER_TYPE, NULL, 0), SHOAL_EFULL);
    uint64_t sent0 = shoal_test_stats(rt).msgs_sent;
    /* Timer 0: priority, fires first; timer 1: ordinary, fires after it. */
    cmd_t c = {.op = OP_START, .n = 2, .slot = 0, .to = target, .priority = 1u << 0};
    c.delay_ms[0] = 20;
    c.type[0] = FIRST_TIMER_TYPE + 1;
    c.delay_ms[1] = 60;
    c.type[1] = FIRST_TIMER_TYPE + 2;
    CU_ASSERT_EQUAL_FATAL(command(rt, drv, &c), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&start_rc[0]), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&start_rc[1]), SHOAL_OK);
    CU_ASSERT_NOT_EQUAL(atomic_load(&timer_ids[0]), 0);
    /* The timer thread fires them in order: once the second was refused,
     * the first was delivered. */
    SHOAL_TEST_WAIT_UNTIL(shoal_test_stats(rt).timer_refused == 1, 10);
    shoal_runtime_stats_t st = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(st.timer_refused, 1);
    CU_ASSERT_EQUAL(st.msgs_sent - sent0, 1 + 1); /* the command and the priority timer */
    CU_ASSERT_EQUAL(atomic_load(&narrivals), 0);  /* still held */
    atomic_store(&gate_open, 1);
    CU_ASSERT_TRUE_FATAL(wait_until(&narrivals, 2, 10));
    /* The priority one first (the system mailbox goes first), with the flag,
     * from the actor that started it; then the message that filled the box. */
    CU_ASSERT_EQUAL(atomic_load(&arrival_type[0]), FIRST_TIMER_TYPE + 1);
    CU_ASSERT_EQUAL(atomic_load(&arrival_flags[0]), SHOAL_MSG_PRIORITY);
    CU_ASSERT_EQUAL(atomic_load(&arrival_from[0]), drv);
    CU_ASSERT_EQUAL(atomic_load(&arrival_type[1]), FIRST_TIMER_TYPE);
    CU_ASSERT_EQUAL(atomic_load(&arrival_flags[1]), 0);
    sleep_ms(100);
    CU_ASSERT_EQUAL(atomic_load(&narrivals), 2); /* the refused one never comes */
    CU_ASSERT_EQUAL(shoal_test_stats(rt).timer_refused, 1);
    shoal_runtime_destroy(rt);
}

/* A priority timer can be cancelled like any other, and still carries its
 * payload. */
static void priority_timer_cancel_and_payload(void)
{
    shoal_pid_t drv;
    shoal_runtime_t *rt = setup(&drv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    cmd_t c = {.op = OP_START, .n = 2, .slot = 0, .payload_size = 100, .priority = 3u};
    c.delay_ms[0] = 400;
    c.type[0] = FIRST_TIMER_TYPE;
    c.delay_ms[1] = 30;
    c.type[1] = FIRST_TIMER_TYPE + 1;
    CU_ASSERT_EQUAL_FATAL(command(rt, drv, &c), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(cancel(rt, drv, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&cancel_rc[0]), SHOAL_OK);
    CU_ASSERT_TRUE_FATAL(wait_until(&narrivals, 1, 10));
    CU_ASSERT_EQUAL(atomic_load(&arrival_type[0]), FIRST_TIMER_TYPE + 1);
    CU_ASSERT_EQUAL(atomic_load(&arrival_flags[0]), SHOAL_MSG_PRIORITY);
    CU_ASSERT_EQUAL(atomic_load(&arrival_size[0]), 100);
    CU_ASSERT_TRUE(atomic_load(&arrival_payload_ok[0]));
    sleep_ms(500); /* past the cancelled one */
    CU_ASSERT_EQUAL(atomic_load(&narrivals), 1);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).timer_refused, 0);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"delivers after the delay", delivers_after_the_delay},
        {"zero delay delivers at once", zero_delay_delivers_at_once},
        {"timers fire in deadline order", timers_fire_in_deadline_order},
        {"cancel before expiry stops the message", cancel_before_expiry_stops_the_message},
        {"cancelled timers leave the rest in order", cancelled_timers_leave_the_rest_in_order},
        {"payloads travel with the timer", payloads_travel_with_the_timer},
        {"the timer thread does not touch a delivered envelope",
         timer_thread_does_not_touch_a_delivered_envelope},
        {"cancel after it fired is ENOPROC", cancel_after_it_fired_is_enoproc},
        {"bogus timer ids are ENOPROC", bogus_timer_ids_are_enoproc},
        {"delivery to a dead actor is counted", delivery_to_a_dead_actor_is_counted},
        {"destroy with pending timers frees them", destroy_with_pending_timers_frees_them},
        {"a priority timer is not refused by a full mailbox",
         priority_timer_is_not_refused_by_a_full_mailbox},
        {"a priority timer cancels and carries its payload", priority_timer_cancel_and_payload},
        {NULL, NULL},
    };
    return shoal_test_run("timer", cases);
}
