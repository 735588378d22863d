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
 * membarrier is made to fail by defining syscall() here: the static
 * libshoal linked into this executable calls this one; everything else is
 * passed on to libc's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "sched/monitor.h"
#include "support.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, 10.0)

long syscall(long n, ...)
{
    va_list ap;
    va_start(ap, n);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (n == SYS_membarrier) {
        errno = ENOSYS;
        return -1;
    }
    typedef long (*syscall_fn)(long, ...);
    static syscall_fn real;
    if (real == NULL) {
        void *f = dlsym(RTLD_NEXT, "syscall");
        memcpy(&real, &f, sizeof real); /* (ISO C has no object-to-function cast) */
    }
    return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
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
    for (int round = 0; round < 3; round++) {
        atomic_store(&gate1, 0), atomic_store(&gate2, 0), atomic_store(&in2, 0);
        atomic_store(&inits, 0);
        shoal_runtime_opts_t o;
        shoal_runtime_opts_init(&o);
        o.threads = 1;
        o.max_extra_threads = 1;
        o.stall_warn_ms = 100;
        o.log_level = SHOAL_LOG_ERROR;
        shoal_runtime_t *rt = shoal_test_runtime_logged_opts(&o);
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
