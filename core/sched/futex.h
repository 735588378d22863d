/* futex.h - sleeping on a 32-bit atomic word (Linux futex). */
#ifndef SHOAL_SCHED_FUTEX_H
#define SHOAL_SCHED_FUTEX_H

#include <errno.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Sleeps while *word == expect, at most timeout (NULL: no limit). Returns
 * 0 when woken or the value differed, ETIMEDOUT, or EINTR. */
static inline int shoal__futex_wait(_Atomic uint32_t *word, uint32_t expect,
                                    const struct timespec *timeout)
{
    long r = syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expect, timeout, NULL, 0);
    if (r == 0 || errno == EAGAIN)
        return 0;
    return errno;
}

/* How often, at least, a wait that can be given up asks whether it should
 * be (a blocking call's `interrupted`, a pool start's, a plugin load's
 * tend): what its caller does from there -- shoald serves its control
 * socket and hears a stop -- waits that long at most. The host thread
 * waits so only in a start or a reload; each ask costs it a few
 * microseconds. */
#define SHOAL_ASK_EVERY_MS 10

static inline void shoal__futex_wake(_Atomic uint32_t *word, int n)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

static inline uint64_t shoal__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* now + ms, in ns, saturating: UINT64_MAX (no deadline) for any ms whose
 * deadline would not fit -- never a sum that wraps into the past. */
static inline uint64_t shoal__deadline_ns(uint64_t now, uint64_t ms)
{
    return ms >= (UINT64_MAX - now) / 1000000u ? UINT64_MAX : now + ms * 1000000u;
}

/* Whole milliseconds from now until the deadline `at` (ns), rounded up so
 * a timer armed with them never fires before it; 0 once it has passed. */
static inline uint64_t shoal__ms_until(uint64_t now, uint64_t at)
{
    return at > now ? (at - now + 999999u) / 1000000u : 0;
}

static inline void shoal__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif
