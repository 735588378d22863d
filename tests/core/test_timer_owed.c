/* test_timer_owed.c - ticks that are never lost (actor/timer.h): a tick
 * whose timer cannot be armed is owed on its node and sent by the timer
 * thread when due -- as a tick to itself, with nothing allocated to keep
 * it; one forgotten is never sent; one armed again supersedes it; one owed
 * to an actor that has ended is dropped. A failed arm is injected
 * (shoal__timers_fail), as for want of memory. And the timer thread's
 * own cache, without which nothing it owes could be sent, is had before
 * the runtime is made, or the runtime is not made (support/fail_alloc.h
 * refuses it).
 *
 * The receiver records into atomics; the test thread asserts after
 * synchronising on them.
 */
#include <time.h>

#include "actor/timer.h"
#include "runtime/runtime.h"
#include "runtime/tcache.h"
#include "fail_alloc.h"
#include "support.h"

#define TICK_TYPE 0x7011u
#define MAX_SEEN 8

static _Atomic unsigned nseen;
static _Atomic uint32_t seen_type[MAX_SEEN];
static _Atomic uint32_t seen_flags[MAX_SEEN];
static _Atomic shoal_pid_t seen_from[MAX_SEEN];
static _Atomic double seen_at[MAX_SEEN];

static void reset(void)
{
    atomic_store(&nseen, 0);
    for (int i = 0; i < MAX_SEEN; i++) {
        atomic_store(&seen_type[i], 0);
        atomic_store(&seen_flags[i], 0);
        atomic_store(&seen_from[i], SHOAL_PID_NONE);
    }
}

static int seen(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    unsigned i = atomic_load(&nseen);
    if (i < MAX_SEEN) {
        atomic_store(&seen_type[i], msg->type);
        atomic_store(&seen_flags[i], msg->flags);
        atomic_store(&seen_from[i], msg->from);
        atomic_store(&seen_at[i], shoal_test_now());
    }
    atomic_store(&nseen, i + 1);
    return 0;
}

static const shoal_behaviour_t receiver = {.name = "receiver", .handle_message = seen};

static shoal_pid_t spawn_receiver(shoal_runtime_t *rt)
{
    shoal_pid_t pid = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &receiver, NULL, NULL, &pid), SHOAL_OK);
    return pid;
}

/* Records cleared, a runtime of 2 threads, the test thread's cache, and a
 * receiver (returned). */
static shoal_pid_t rig_up(shoal_runtime_t **rt, shoal_tcache_t **tc)
{
    reset();
    *rt = shoal_test_runtime(2);
    *tc = shoal__tcache_get(*rt);
    return spawn_receiver(*rt);
}

/* Arrival i was tick `type`, as a priority cast from `to` itself. */
static void assert_tick(unsigned i, uint32_t type, shoal_pid_t to)
{
    CU_ASSERT_EQUAL(atomic_load(&seen_type[i]), type);
    CU_ASSERT_EQUAL(atomic_load(&seen_from[i]), to);
    CU_ASSERT(atomic_load(&seen_flags[i]) & SHOAL_MSG_PRIORITY);
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Armed as usual: a timer (id != 0), nothing owed; the tick comes once,
 * as a priority cast from the receiver itself. */
static void armed_as_usual(void)
{
    shoal_runtime_t *rt;
    shoal_tcache_t *tc;
    shoal_pid_t to = rig_up(&rt, &tc);
    shoal_tick_t k = {0};
    shoal_timer_t id = 0;
    CU_ASSERT_EQUAL(shoal__tick_arm(rt, tc, &k, to, 20, TICK_TYPE, &id), SHOAL_OK);
    CU_ASSERT_NOT_EQUAL(id, 0);
    CU_ASSERT_FALSE(shoal__tick_owed(rt, &k));
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&nseen) == 1, 10);
    pause_ms(50);
    CU_ASSERT_EQUAL(atomic_load(&nseen), 1);
    assert_tick(0, TICK_TYPE, to);
    shoal_runtime_destroy(rt);
}

/* Its timer cannot be armed: SHOAL_ENOMEM, id 0, owed -- and the tick
 * still comes, once, as the armed one would, no earlier than asked. */
static void owed_is_sent(void)
{
    shoal_runtime_t *rt;
    shoal_tcache_t *tc;
    shoal_pid_t to = rig_up(&rt, &tc);
    shoal_tick_t k = {0};
    shoal_timer_t id = 99;
    shoal__timers_fail(rt, 1);
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal__tick_arm(rt, tc, &k, to, 40, TICK_TYPE, &id), SHOAL_ENOMEM);
    CU_ASSERT_EQUAL(id, 0);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&nseen) == 1, 10);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&nseen), 1);
    CU_ASSERT(atomic_load(&seen_at[0]) - t0 >= 0.040);
    assert_tick(0, TICK_TYPE, to);
    pause_ms(50);
    CU_ASSERT_EQUAL(atomic_load(&nseen), 1); /* once */
    /* Off the list once sent: forgetting it is a no-op, arming it works. */
    shoal__tick_forget(rt, &k);
    CU_ASSERT_FALSE(shoal__tick_owed(rt, &k));
    CU_ASSERT_EQUAL(shoal__tick_arm(rt, tc, &k, to, 1, TICK_TYPE + 1, &id), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&nseen) == 2, 10);
    CU_ASSERT_EQUAL(atomic_load(&seen_type[1]), TICK_TYPE + 1);
    shoal_runtime_destroy(rt);
}

/* Forgotten while owed (its owner goes): never sent. */
static void forgotten_is_not_sent(void)
{
    shoal_runtime_t *rt;
    shoal_tcache_t *tc;
    shoal_pid_t to = rig_up(&rt, &tc);
    shoal_tick_t k = {0};
    shoal_timer_t id;
    shoal__timers_fail(rt, 1);
    CU_ASSERT_EQUAL(shoal__tick_arm(rt, tc, &k, to, 30, TICK_TYPE, &id), SHOAL_ENOMEM);
    CU_ASSERT_TRUE(shoal__tick_owed(rt, &k));
    shoal__tick_forget(rt, &k);
    CU_ASSERT_FALSE(shoal__tick_owed(rt, &k));
    pause_ms(150);
    CU_ASSERT_EQUAL(atomic_load(&nseen), 0);
    shoal_runtime_destroy(rt);
}

/* Owed, then armed again with a timer: the armed one supersedes it -- one
 * tick, the second's type. Owed twice: one node, the later time. */
static void armed_again_supersedes(void)
{
    shoal_runtime_t *rt;
    shoal_tcache_t *tc;
    shoal_pid_t to = rig_up(&rt, &tc);
    shoal_tick_t k = {0};
    shoal_timer_t id;
    shoal__timers_fail(rt, 1);
    CU_ASSERT_EQUAL(shoal__tick_arm(rt, tc, &k, to, 60, TICK_TYPE, &id), SHOAL_ENOMEM);
    CU_ASSERT_EQUAL(shoal__tick_arm(rt, tc, &k, to, 10, TICK_TYPE + 1, &id), SHOAL_OK);
    CU_ASSERT_FALSE(shoal__tick_owed(rt, &k));
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&nseen) == 1, 10);
    pause_ms(150);
    CU_ASSERT_EQUAL(atomic_load(&nseen), 1);
    CU_ASSERT_EQUAL(atomic_load(&seen_type[0]), TICK_TYPE + 1);

    /* (The first 100 ms: ample for the second arm to come first, even on
     * a loaded machine under a sanitizer.) */
    reset();
    shoal__timers_fail(rt, 2);
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal__tick_arm(rt, tc, &k, to, 100, TICK_TYPE, &id), SHOAL_ENOMEM);
    CU_ASSERT_EQUAL(shoal__tick_arm(rt, tc, &k, to, 200, TICK_TYPE + 2, &id), SHOAL_ENOMEM);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&nseen) == 1, 10);
    CU_ASSERT(atomic_load(&seen_at[0]) - t0 >= 0.200);
    CU_ASSERT_EQUAL(atomic_load(&seen_type[0]), TICK_TYPE + 2);
    pause_ms(50);
    CU_ASSERT_EQUAL(atomic_load(&nseen), 1);
    shoal_runtime_destroy(rt);
}

static int stop_now(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    (void)msg;
    shoal_exit(ctx, 0);
    return 0;
}

static const shoal_behaviour_t stopper = {.name = "stopper", .handle_message = stop_now};

/* Owed to an actor that has ended (before the tick was even armed):
 * dropped when due (the node leaves the list), and the timer thread goes
 * on: a tick owed to a live actor after it still comes. */
static void owed_to_the_ended_is_dropped(void)
{
    shoal_runtime_t *rt;
    shoal_tcache_t *tc;
    shoal_pid_t to = rig_up(&rt, &tc);
    shoal_pid_t gone = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &stopper, NULL, NULL, &gone), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, gone, 1, NULL, 0), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_stats(rt).actors_live == 1, 10);
    CU_ASSERT_EQUAL_FATAL(shoal_test_stats(rt).actors_live, 1);
    shoal_tick_t k1 = {0}, k2 = {0};
    shoal_timer_t id;
    shoal__timers_fail(rt, 2);
    CU_ASSERT_EQUAL(shoal__tick_arm(rt, tc, &k1, gone, 30, TICK_TYPE, &id), SHOAL_ENOMEM);
    CU_ASSERT_EQUAL(shoal__tick_arm(rt, tc, &k2, to, 60, TICK_TYPE + 1, &id), SHOAL_ENOMEM);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&nseen) == 1, 10);
    CU_ASSERT_EQUAL(atomic_load(&nseen), 1);
    CU_ASSERT_EQUAL(atomic_load(&seen_type[0]), TICK_TYPE + 1);
    SHOAL_TEST_WAIT_UNTIL(!shoal__tick_owed(rt, &k1), 10);
    CU_ASSERT_FALSE(shoal__tick_owed(rt, &k1));
    CU_ASSERT_FALSE(shoal__tick_owed(rt, &k2));
    shoal_runtime_destroy(rt);
}

/* No memory for the timer thread's cache: the runtime is not made
 * (SHOAL_ENOMEM), exactly that one allocation refused -- where the timer
 * thread used to start without a cache, fire every timer into nothing and
 * owe ticks for good. With memory again, a runtime is made, and a tick
 * owed in it comes. */
static void no_timer_cache_no_runtime(void)
{
    shoal_runtime_opts_t o;
    shoal_runtime_opts_init(&o);
    o.threads = 2;
    o.log_level = SHOAL_LOG_ERROR;
    shoal_runtime_t *rt = NULL;
    unsigned long refused = fa_refused();
    fa_arm(FA_MALLOC | FA_CALLOC, sizeof(shoal_tcache_t), 1); /* malloc + memset: calloc */
    CU_ASSERT_EQUAL(shoal_runtime_create(&rt, &o), SHOAL_ENOMEM);
    fa_disarm();
    CU_ASSERT_PTR_NULL(rt);
    CU_ASSERT_EQUAL(fa_refused() - refused, 1);

    shoal_tcache_t *tc;
    shoal_pid_t to = rig_up(&rt, &tc);
    shoal_tick_t k = {0};
    shoal_timer_t id = 1;
    shoal__timers_fail(rt, 1);
    CU_ASSERT_EQUAL(shoal__tick_arm(rt, tc, &k, to, 20, TICK_TYPE, &id), SHOAL_ENOMEM);
    CU_ASSERT_TRUE(shoal__tick_owed(rt, &k));
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&nseen) == 1, 10);
    assert_tick(0, TICK_TYPE, to);
    CU_ASSERT_FALSE(shoal__tick_owed(rt, &k));
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"armed as usual", armed_as_usual},
        {"owed: sent when due", owed_is_sent},
        {"forgotten: never sent", forgotten_is_not_sent},
        {"armed again: supersedes", armed_again_supersedes},
        {"owed to an ended actor: dropped", owed_to_the_ended_is_dropped},
        {"no memory for the timer's cache: no runtime", no_timer_cache_no_runtime},
        {NULL, NULL},
    };
    return shoal_test_run("timer_owed", cases);
}
