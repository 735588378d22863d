/* test_monitor_blind.c - the monitor without membarrier (an old kernel, a
 * seccomp filter: core/sched/monitor.c lists a stall "blind", without
 * names, and ends it itself). A compensating thread that is asked to
 * retire while its callback is young, then runs that callback past the
 * hand-off mark (listed blind) and retires after it returns, leaves no
 * listing behind: the stall count goes back to 0 -- the bulkhead
 * (core/sched/bulkhead.h) counts no callback that has returned -- and a new
 * pool's members start. (Before: the slot was joined and its look reset
 * without ending the listing: status listed the stall for good, and the
 * bulkhead counted it as stuck.)
 *
 * membarrier is made to fail as a container's seccomp filter makes it
 * fail: ENOSYS, from a filter this process installs before its runtime's
 * threads exist (they inherit it).
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "sched/monitor.h"
#include "support.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, 10.0)

/* membarrier fails with ENOSYS from now on, in this thread and the ones it
 * starts; false if the kernel has no seccomp filters. */
static bool no_membarrier(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_membarrier, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof f[0]), f};
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
           prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0 &&
           syscall(__NR_membarrier, 0, 0, 0) < 0 && errno == ENOSYS;
}

static atomic_int gate1, gate2, in2, inits;

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Type 1 waits for gate1, type 2 for gate2. */
static int wait_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx, (void)state;
    if (msg->type == 1) {
        while (!atomic_load(&gate1))
            nap_ms(1);
    } else {
        atomic_store(&in2, 1);
        while (!atomic_load(&gate2))
            nap_ms(1);
    }
    return SHOAL_OK;
}

static int count_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx, (void)state, (void)args;
    atomic_fetch_add(&inits, 1);
    return SHOAL_OK;
}

static const shoal_behaviour_t waiter = {.name = "wait", .handle_message = wait_handle};
static const shoal_behaviour_t member = {
    .name = "member", .init = count_init, .handle_message = wait_handle};

static void blind_listing_ends_with_its_thread(void)
{
    if (!no_membarrier()) {
        printf("skipped: no seccomp filter here (%s) ", strerror(errno));
        return;
    }
    for (int round = 0; round < 3; round++) {
        atomic_store(&gate1, 0), atomic_store(&gate2, 0), atomic_store(&in2, 0);
        atomic_store(&inits, 0);
        shoal_runtime_t *rt = shoal_test_runtime_watched(1, 1, SHOAL_LOG_ERROR);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
        shoal_pid_t s1, s2;
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &waiter, NULL, NULL, &s1), SHOAL_OK);
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &waiter, NULL, NULL, &s2), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, s1, 1, NULL, 0), SHOAL_OK); /* the thread hangs */
        WAIT_UNTIL(atomic_load(&rt->nstuck) == 1);
        CU_ASSERT_EQUAL_FATAL(atomic_load(&rt->nstuck), 1);
        /* Queued behind it: the compensating thread takes it. */
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, s2, 2, NULL, 0), SHOAL_OK);
        WAIT_UNTIL(atomic_load(&in2));
        atomic_store(&gate1, 1); /* s1 returns while s2's callback is young: retire asked */
        nap_ms(400);             /* s2 past the hand-off: listed blind */
        CU_ASSERT_EQUAL(atomic_load(&rt->nstuck), 1); /* (s1's listing ended as it returned) */
        atomic_store(&gate2, 1);                      /* s2 returns; its thread retires */
        WAIT_UNTIL(shoal_test_stats(rt).extra_threads_live == 0 && atomic_load(&rt->nstuck) == 0);
        CU_ASSERT_EQUAL(atomic_load(&rt->nstuck), 0);
        CU_ASSERT_EQUAL(shoal__stalls(rt, NULL, 0, true), 0);
        /* A new pool starts. */
        shoal_pool_spec_t ps;
        shoal_pool_spec_init(&ps);
        ps.name = "late";
        ps.worker = &member;
        ps.size = 2;
        shoal_pid_t pool;
        CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &ps, &pool), SHOAL_OK);
        CU_ASSERT_EQUAL(atomic_load(&inits), 2);
        shoal_runtime_destroy(rt);
    }
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a blind listing ends with its thread", blind_listing_ends_with_its_thread},
        {NULL, NULL},
    };
    return shoal_test_run("monitor_blind", cases);
}
