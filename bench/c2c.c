/* c2c.c - shoal-c2c: how long a cache line takes to go from one CPU to
 * another and back on this machine, now. Two threads pinned to CPUs 0 and
 * 1 pass a counter through one line 200,000 times; prints the median round
 * trip of 5 such runs in ns: `c2c_ns=437.5`.
 *
 * Why: on the shared 2-vCPU VMs shoal is measured on, this figure moves
 * with the host's placement of the vCPUs (about 100 ns in one mode, 450 in
 * another, from run to run of the same day), and a pool whose producer and
 * workers sit on two cores pays it per message. bench/dist.sh records it
 * beside each run so a slow run can be told apart from a slow machine.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setaffinity_np */
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { TRIPS = 200000, RUNS = 5 };

static _Alignas(64) _Atomic unsigned line;

static int pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *other(void *arg)
{
    (void)arg;
    if (pin(1) != 0)
        return NULL; /* the main thread then times out: see main */
    for (unsigned i = 0; i < TRIPS; i++) {
        /* acquire/release: pairs with the main thread's; the counter alone
         * is the message, nothing else rides on it */
        while (atomic_load_explicit(&line, memory_order_acquire) != 2 * i + 1)
            ;
        atomic_store_explicit(&line, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(void)
{
    double trip[RUNS];
    for (int r = 0; r < RUNS; r++) {
        atomic_store(&line, 0);
        pthread_t t;
        if (pin(0) != 0 || pthread_create(&t, NULL, other, NULL) != 0) {
            fprintf(stderr, "shoal-c2c: needs two CPUs (0 and 1) it may run on\n");
            return 1;
        }
        double t0 = now(), limit = t0 + 10.0;
        for (unsigned i = 0; i < TRIPS; i++) {
            atomic_store_explicit(&line, 2 * i + 1, memory_order_release);
            while (atomic_load_explicit(&line, memory_order_acquire) != 2 * i + 2)
                if ((i & 1023) == 0 && now() > limit) {
                    fprintf(stderr, "shoal-c2c: no answer from CPU 1 in 10 s\n");
                    return 1;
                }
        }
        trip[r] = (now() - t0) / TRIPS * 1e9;
        pthread_join(t, NULL);
    }
    qsort(trip, RUNS, sizeof *trip, by_value);
    printf("c2c_ns=%.1f\n", trip[RUNS / 2]);
    return 0;
}
